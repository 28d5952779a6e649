// fmt's compiled part, built into iotail from Debian's fmt headers (libfmt-dev) instead of linking
// libfmt.so (IOTAIL_STATIC_RUNTIME): with the C++ runtime and Boost.Program_options linked in
// too, iotail loads no C++ shared library, which was most of its start-up (see CMakeLists.txt).
// The functions that fmt's headers declare and do not define inline are defined by format-inl.h;
// the templates they declare `extern` are instantiated here, for the character types fmt's own
// library instantiates.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
