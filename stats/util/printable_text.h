// Text from outside (a user's file, a server's message) as an error message may show it: never raw
// control bytes or broken UTF-8 (a job file that is not one, /etc/shadow included by mistake, an
// NBD server's refusal with escape sequences), and never more than a line.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace iotail::stats {

// The length of the printable UTF-8 character `s` starts with, or 0 for a control character
// (C0, DEL, C1) or a byte that does not start a well-formed UTF-8 sequence.
size_t PrintableLength(std::string_view s);
// Where `s` has its first byte that is not printable UTF-8 (tabs are), or npos.
size_t FindUnprintable(std::string_view s);
// `text` as an error message may show it: what is not printable UTF-8 as \xNN, and no more than
// 120 bytes of it.
std::string Printable(std::string_view text);

}  // namespace iotail::stats
