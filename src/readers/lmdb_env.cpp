#include "stoker/readers/lmdb_env.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "stoker/core/error.hpp"
#include "stoker/core/mapping_guard.hpp"

#ifdef STOKER_HAVE_LMDB
#include <lmdb.h>
#endif

namespace stoker::readers {

#ifdef STOKER_HAVE_LMDB
struct LmdbDatabase::Handles {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  // LMDB's map, guarded like stoker's own mappings (core/mapping_guard.hpp): the file's bytes as
  // they were at open; a database cut under the job reads zeros and names itself, no SIGBUS.
  std::optional<MappingGuard> guard;
};

namespace {
// The [begin, end) of the process's mapping that holds `p` (/proc/self/maps), or {0, 0}.
std::pair<uintptr_t, uintptr_t> mapping_around(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return {0, 0};
  unsigned long begin = 0, end = 0;
  char line[4096];
  std::pair<uintptr_t, uintptr_t> found{0, 0};
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "%lx-%lx", &begin, &end) == 2 && a >= begin && a < end) {
      found = {begin, end};
      break;
    }
  }
  std::fclose(f);
  return found;
}

void check(int rc, const std::string& path, const char* what) {
  STOKER_ENFORCE(rc == MDB_SUCCESS, IOError, "LMDB '", path, "': ", what,
                 " failed: ", mdb_strerror(rc));
}
}  // namespace

LmdbDatabase::LmdbDatabase(const std::string& path) : h_(std::make_unique<Handles>()) {
  struct stat st {};
  STOKER_ENFORCE(::stat(path.c_str(), &st) == 0, IOError, "LMDB '", path, "' does not exist");
  check(mdb_env_create(&h_->env), path, "mdb_env_create");
  unsigned flags = MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS | (S_ISDIR(st.st_mode) ? 0 : MDB_NOSUBDIR);
  int rc = mdb_env_open(h_->env, path.c_str(), flags, 0664);
  if (rc != MDB_SUCCESS) {
    mdb_env_close(h_->env);
    h_->env = nullptr;
    check(rc, path, "opening the environment");
  }
  check(mdb_txn_begin(h_->env, nullptr, MDB_RDONLY, &h_->txn), path, "mdb_txn_begin");
  check(mdb_dbi_open(h_->txn, nullptr, 0, &h_->dbi), path, "mdb_dbi_open");
  MDB_cursor* cursor = nullptr;
  check(mdb_cursor_open(h_->txn, h_->dbi, &cursor), path, "mdb_cursor_open");
  MDB_val k, v;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    keys_.emplace_back(static_cast<const char*>(k.mv_data), k.mv_size);
    values_.emplace_back(static_cast<const uint8_t*>(v.mv_data), v.mv_size);
  }
  mdb_cursor_close(cursor);
  STOKER_ENFORCE(rc == MDB_NOTFOUND, IOError, "LMDB '", path,
                 "': reading failed: ", mdb_strerror(rc));
  mdb_filehandle_t fd = -1;
  struct stat data {};
  if (!values_.empty() && mdb_env_get_fd(h_->env, &fd) == MDB_SUCCESS && ::fstat(fd, &data) == 0) {
    // LMDB does not tell where it mapped the file (mdb_env_info's address is MDB_FIXEDMAP's):
    // the mapping that holds the values says.
    const auto [begin, end] = mapping_around(values_.front().data());
    if (begin != 0) {
      const size_t length = std::min(size_t(data.st_size), size_t(end - begin));
      h_->guard.emplace(reinterpret_cast<const void*>(begin), length,
                        S_ISDIR(st.st_mode) ? path + "/data.mdb" : path, fd);
    }
  }
}

LmdbDatabase::~LmdbDatabase() {
  h_->guard.reset();  // before the map goes
  if (h_->txn) mdb_txn_abort(h_->txn);
  if (h_->env) mdb_env_close(h_->env);
}

bool lmdb_available() { return true; }
#else
struct LmdbDatabase::Handles {};
LmdbDatabase::LmdbDatabase(const std::string& path) {
  throw RuntimeError("cannot open LMDB '" + path + "': stoker was built without liblmdb");
}
LmdbDatabase::~LmdbDatabase() = default;
bool lmdb_available() { return false; }
#endif

int64_t LmdbSourceDb::open() {
  db = std::make_shared<const LmdbDatabase>(path);
  owner = keep_alive(db);
  STOKER_ENFORCE(db->size() > 0, ValueError, "LMDB '", path, "' is empty");
  return int64_t(db->size());
}

std::shared_ptr<Buffer> keep_alive(std::shared_ptr<const LmdbDatabase> db) {
  struct Hold {
    explicit Hold(std::shared_ptr<const LmdbDatabase> d) : db(std::move(d)) {}
    std::shared_ptr<const LmdbDatabase> db;
    Buffer none{nullptr, 0, MemoryKind::kHost, nullptr, 0};  // views carry their own pointers
  };
  auto hold = std::make_shared<Hold>(std::move(db));
  return {hold, &hold->none};
}

}  // namespace stoker::readers
