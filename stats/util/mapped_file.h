// MappedFile: a read-only, private memory mapping of a whole file (an empty file needs no
// mapping). Owns the mapping; movable no, copyable no. Throws std::system_error naming the file
// when it cannot be opened, examined or mapped. Thread-safe to read once constructed.
#pragma once

#include <cstddef>
#include <string>

namespace iotail::stats {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace iotail::stats
