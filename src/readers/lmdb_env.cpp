#include "stoker/readers/lmdb_env.hpp"

#include <sys/stat.h>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_LMDB
#include <lmdb.h>
#endif

namespace stoker::readers {

#ifdef STOKER_HAVE_LMDB
struct LmdbDatabase::Handles {
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
};

namespace {
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
}

LmdbDatabase::~LmdbDatabase() {
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
