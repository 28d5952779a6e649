// EvaluateArithmetic (cli/job_file.h): fio's job-file arithmetic, checked (overflow, division by
// zero and nesting are errors naming the line, never a signal or a stack overflow).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/job_file.h"
#include "stats/core/errors.h"
#include "stats/util/printable_text.h"

namespace iotail::cli {

using stats::Printable;
using stats::UsageError;

namespace {

// A recursive-descent evaluator: expr = term {(+|-) term}; term = power {(*|/|%) power};
// power = unary [^ power]; unary = [-|+] unary | primary; primary = number[suffix] | (expr).
class Arithmetic {
 public:
  Arithmetic(std::string_view text, const std::string& where) : text_(text), where_(where) {}
  int64_t Evaluate() {
    const int64_t v = Expr();
    Skip();
    if (pos_ != text_.size()) Fail(fmt::format("unexpected '{}'", Printable(text_.substr(pos_))));
    return v;
  }

 private:
  // Every recursion eats a '(', a sign or a '^' and holds one of these while it lasts, so the
  // stack is bounded whatever the text.
  class Nested {
   public:
    explicit Nested(Arithmetic& a) : a_(a) {
      if (++a_.depth_ > kArithmeticMaxNesting) {
        a_.Fail(fmt::format("nested deeper than {} (parentheses, signs and '^')",
                            kArithmeticMaxNesting));
      }
    }
    ~Nested() { --a_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Arithmetic& a_;
  };

  [[noreturn]] void Fail(const std::string& why) const {
    throw UsageError(fmt::format("{}: bad arithmetic '{}': {}", where_, Printable(text_), why));
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // The next character if it is one of `operators` (eaten), else 0.
  char EatOneOf(std::string_view operators) {
    Skip();
    if (pos_ == text_.size() || operators.find(text_[pos_]) == std::string_view::npos) return 0;
    return text_[pos_++];
  }
  void Check(bool overflow) const {
    if (overflow) Fail("overflows 64 bits");
  }
  // `a op b`, checked: an overflow or a division by zero is an error, never a trap.
  int64_t Apply(char op, int64_t a, int64_t b) const {
    int64_t r = 0;
    switch (op) {
      case '+':
        Check(__builtin_add_overflow(a, b, &r));
        return r;
      case '-':
        Check(__builtin_sub_overflow(a, b, &r));
        return r;
      case '*':
        Check(__builtin_mul_overflow(a, b, &r));
        return r;
      default:  // '/' or '%'
        if (b == 0) Fail("division by zero");
        // INT64_MIN / -1 overflows, and the processor traps (SIGFPE) on its remainder too.
        if (b == -1) return op == '%' ? 0 : Apply('-', 0, a);
        return op == '%' ? a % b : a / b;
    }
  }
  // One level of left-associative operators over `operand`.
  int64_t LeftAssociative(std::string_view operators, int64_t (Arithmetic::*operand)()) {
    int64_t v = (this->*operand)();
    for (char op; (op = EatOneOf(operators)) != 0;) v = Apply(op, v, (this->*operand)());
    return v;
  }
  int64_t Expr() { return LeftAssociative("+-", &Arithmetic::Term); }
  int64_t Term() { return LeftAssociative("*/%", &Arithmetic::Power); }
  int64_t Power() {
    const int64_t base = Unary();
    if (!Eat('^')) return base;
    const Nested nested(*this);
    const int64_t exp = Power();
    if (exp < 0) Fail("negative exponent");
    // By squaring: 1^(2^62) must not take 2^62 steps. A square that overflows is needed only
    // while bits of the exponent remain, and then the result overflows too.
    int64_t v = 1, square = base;
    for (int64_t rest = exp; rest != 0; rest >>= 1) {
      if (rest & 1) v = Apply('*', v, square);
      if (rest > 1) square = Apply('*', square, square);
    }
    return v;
  }
  int64_t Unary() {
    if (Eat('-')) {
      const Nested nested(*this);
      return Apply('-', 0, Unary());
    }
    if (Eat('+')) {
      const Nested nested(*this);
      return Unary();
    }
    return Primary();
  }
  int64_t Primary() {
    if (Eat('(')) {
      const Nested nested(*this);
      const int64_t v = Expr();
      if (!Eat(')')) Fail("missing ')'");
      return v;
    }
    Skip();
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      v = Apply('+', Apply('*', v, 10), text_[pos_] - '0');
      ++pos_;
    }
    if (pos_ == start) {
      Fail(pos_ < text_.size() ? fmt::format("unexpected '{}'", Printable(text_.substr(pos_, 1)))
                               : std::string("a number is missing"));
    }
    if (pos_ < text_.size()) {
      const char s = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_])));
      const size_t at = std::string_view("kmgt").find(s);
      if (at != std::string_view::npos) {
        ++pos_;
        for (size_t i = 0; i <= at; ++i) v = Apply('*', v, 1024);
      }
    }
    return v;
  }

  std::string_view text_;
  const std::string& where_;
  size_t pos_ = 0;
  size_t depth_ = 0;  // Nested levels open
};

}  // namespace

int64_t EvaluateArithmetic(std::string_view text, const std::string& where) {
  return Arithmetic(text, where).Evaluate();
}

}  // namespace iotail::cli
