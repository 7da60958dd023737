// What stoker reads of FITS headers itself, before cfitsio parses them. cfitsio 4.2 trusts some
// header values it divides by: a compressed image's ZTILEn of 0 (or a fraction that truncates
// to 0) is a SIGFPE inside fits_movabs_hdu, on the way to any later HDU too. So every header
// cfitsio will parse on the way to an HDU is first walked here, from the raw 2880-byte blocks:
// each header's cards up to END, the size of the data that follows (|BITPIX|/8 x GCOUNT x
// (PCOUNT + NAXIS1 x ... x NAXISn), random groups without NAXIS1), and in the header of a
// compressed image (ZIMAGE = T) every ZTILEn, which must be a positive integer.
//
// The walk follows the file exactly as cfitsio does or refuses it: mandatory values it cannot
// read as integers, negative sizes and sizes past int64 are refused naming the file and HDU,
// so that cfitsio never reaches a header the walk did not check. It stops where the file ends
// (or a header has no END in the whole blocks left), where cfitsio stops too.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace stoker::readers {

class FitsHeaderWalk {
 public:
  // `file` must outlive this object; `path` names it in errors.
  FitsHeaderWalk(std::span<const uint8_t> file, std::string path);
  // Checks the headers of HDUs 1 to `hdu` (1-based) that the file holds (those checked
  // before are not read again). Throws ValueError naming the file and the HDU, and again for
  // any later call reaching the header it refused.
  void check_to(int hdu);

 private:
  // Checks the header at next_ and moves next_ past its data; false at the end of the file.
  bool check_next();

  std::span<const uint8_t> file_;
  std::string path_;
  int checked_ = 0;      // HDUs checked
  int64_t next_ = 0;     // where the next HDU's header starts
  bool ended_ = false;   // the file holds no more whole HDU headers
  std::string refused_;  // why the walk refused the header of HDU checked_, if it did
};

}  // namespace stoker::readers
