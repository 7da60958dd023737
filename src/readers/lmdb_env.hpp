// A read-only LMDB database held open for a reader's lifetime: every value is located once
// (keys in LMDB's sorted order) and read straight from the memory map afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::readers {

class LmdbDatabase {
 public:
  // Opens the environment at `path` (a folder with data.mdb, or a file) read-only and without
  // a lock file, so read-only media work. Throws IOError naming the path and LMDB's reason.
  explicit LmdbDatabase(const std::string& path);
  ~LmdbDatabase();
  LmdbDatabase(const LmdbDatabase&) = delete;
  LmdbDatabase& operator=(const LmdbDatabase&) = delete;

  size_t size() const { return values_.size(); }
  const std::string& key(size_t i) const { return keys_[i]; }
  // Valid while this object lives (the read transaction stays open).
  std::span<const uint8_t> value(size_t i) const { return values_[i]; }

 private:
  struct Handles;
  std::unique_ptr<Handles> h_;
  std::vector<std::string> keys_;
  std::vector<std::span<const uint8_t>> values_;
};

// An owner for samples that view values of `db` without copying: it keeps the database (its
// map and read transaction) alive while any such sample lives.
std::shared_ptr<Buffer> keep_alive(std::shared_ptr<const LmdbDatabase> db);

// An LMDB as the Caffe readers use it: opened at index time, an owner that keeps it alive for
// samples that view its values, and "path[key]" as every sample's source.
struct LmdbSourceDb {
  std::string path;
  std::shared_ptr<const LmdbDatabase> db;
  std::shared_ptr<Buffer> owner;

  // Opens `path`; throws ValueError when the database is empty. Returns its size.
  int64_t open();
  std::string source_info(int64_t index) const { return path + "[" + db->key(size_t(index)) + "]"; }
  std::span<const uint8_t> value(int64_t index) const { return db->value(size_t(index)); }
};

// True when stoker was built with liblmdb.
bool lmdb_available();

}  // namespace stoker::readers
