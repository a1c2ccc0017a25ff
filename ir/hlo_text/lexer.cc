// HLO text lexer: see hlo_lexer.h. Numbers are matched in the order XLA's
// lexer tries them (float, dim labels, DxD, pad, int, -inf, -nan) so that
// `1_1x0_0` and `3x3` come out as single tokens.
#include "ir/hlo_text/lexer.h"

#include <cctype>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace xjit {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  explicit Lexer(absl::string_view text) : s_(text) {}

  // The next token; kEof at the end, and again on every later call.
  Token Next() {
    SkipSpaceAndComments();
    Token token;
    token.offset = pos_;
    token.line = line_;
    token.column = static_cast<int>(pos_ - line_start_) + 1;
    if (pos_ >= s_.size()) {
      token.kind = TokenKind::kEof;
      token.end = pos_;
      return token;
    }
    LexOne(&token);
    token.end = pos_;
    return token;
  }

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    do {
      tokens.push_back(Next());
    } while (tokens.back().kind != TokenKind::kEof);
    return tokens;
  }

 private:
  char At(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }

  void Advance(size_t n) {
    for (size_t i = 0; i < n && pos_ < s_.size(); ++i) {
      if (s_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
      ++pos_;
    }
  }

  void SkipSpaceAndComments() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        Advance(1);
      } else if (c == '/' && At(pos_ + 1) == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') Advance(1);
      } else if (c == '/' && At(pos_ + 1) == '*') {
        size_t close = s_.find("*/", pos_ + 2);
        Advance(close == absl::string_view::npos ? s_.size() - pos_ : close + 2 - pos_);
      } else {
        return;
      }
    }
  }

  size_t Digits(size_t p) const {
    size_t n = 0;
    while (IsDigit(At(p + n))) ++n;
    return n;
  }

  // Each Match* returns the length of the match at p, or 0.
  size_t MatchFloat(size_t p) const {
    size_t q = p;
    if (At(q) == '-') ++q;
    size_t d1 = Digits(q);
    q += d1;
    bool dot = false, exponent = false;
    size_t d2 = 0;
    if (At(q) == '.' && At(q + 1) != '.') {
      dot = true;
      ++q;
      d2 = Digits(q);
      q += d2;
    }
    if (d1 + d2 == 0) return 0;
    if (At(q) == 'e' || At(q) == 'E') {
      size_t r = q + 1;
      if (At(r) == '+' || At(r) == '-') ++r;
      size_t ed = Digits(r);
      if (ed > 0) {
        q = r + ed;
        exponent = true;
      }
    }
    if (!dot && !exponent) return 0;
    return q - p;
  }

  size_t MatchDimLabels(size_t p) const {
    auto run = [this](size_t q, absl::string_view allowed) {
      size_t n = 0;
      while (At(q + n) != '\0' && allowed.find(At(q + n)) != absl::string_view::npos) ++n;
      return n;
    };
    size_t q = p;
    size_t n = run(q, "0123456789bf?");
    if (n < 2 || At(q + n) != '_') return 0;
    q += n + 1;
    n = run(q, "0123456789io?");
    if (n < 2 || At(q + n) != '-' || At(q + n + 1) != '>') return 0;
    q += n + 2;
    n = run(q, "0123456789bf?");
    if (n < 2) return 0;
    return q + n - p;
  }

  size_t MatchDxD(size_t p) const {
    size_t q = p;
    size_t n = Digits(q);
    if (n == 0) return 0;
    q += n;
    int groups = 0;
    while (At(q) == 'x' && Digits(q + 1) > 0) {
      q += 1 + Digits(q + 1);
      ++groups;
    }
    return groups > 0 ? q - p : 0;
  }

  // -?\d+_-?\d+(_\d+)?
  size_t MatchPadGroup(size_t p) const {
    size_t q = p;
    if (At(q) == '-') ++q;
    size_t n = Digits(q);
    if (n == 0) return 0;
    q += n;
    if (At(q) != '_') return 0;
    ++q;
    if (At(q) == '-') ++q;
    n = Digits(q);
    if (n == 0) return 0;
    q += n;
    // An interior padding; a negative one lexes too, so that the verifier
    // can say what is wrong with it instead of the parser stumbling on '-'.
    if (At(q) == '_' && Digits(q + 1) > 0) {
      q += 1 + Digits(q + 1);
    } else if (At(q) == '_' && At(q + 1) == '-' && Digits(q + 2) > 0) {
      q += 2 + Digits(q + 2);
    }
    return q - p;
  }

  size_t MatchPad(size_t p) const {
    size_t n = MatchPadGroup(p);
    if (n == 0) return 0;
    size_t q = p + n;
    while (At(q) == 'x') {
      size_t m = MatchPadGroup(q + 1);
      if (m == 0) break;
      q += 1 + m;
    }
    return q - p;
  }

  size_t MatchInt(size_t p) const {
    size_t q = p;
    if (At(q) == '-') ++q;
    size_t n = Digits(q);
    return n == 0 ? 0 : q + n - p;
  }

  // nan(0x1234) at p (after any '-'): the length of the "(0x...)" suffix or 0.
  size_t MatchNanPayload(size_t p) const {
    if (At(p) != '(' || At(p + 1) != '0' || (At(p + 2) != 'x' && At(p + 2) != 'X')) return 0;
    size_t q = p + 3;
    size_t n = 0;
    while (IsHexDigit(At(q + n))) ++n;
    if (n == 0 || At(q + n) != ')') return 0;
    return q + n + 1 - p;
  }

  void Emit(Token* token, TokenKind kind, size_t length) {
    token->kind = kind;
    token->text = s_.substr(pos_, length);
    Advance(length);
  }

  bool LexNumber(Token* token) {
    if (size_t n = MatchFloat(pos_)) return Emit(token, TokenKind::kFloat, n), true;
    if (size_t n = MatchDimLabels(pos_)) return Emit(token, TokenKind::kDimLabels, n), true;
    if (size_t n = MatchDxD(pos_)) return Emit(token, TokenKind::kDxD, n), true;
    if (size_t n = MatchPad(pos_)) return Emit(token, TokenKind::kPad, n), true;
    if (size_t n = MatchInt(pos_)) return Emit(token, TokenKind::kInt, n), true;
    if (s_.substr(pos_, 4) == "-inf" && !IsIdentChar(At(pos_ + 4))) {
      return Emit(token, TokenKind::kFloat, 4), true;
    }
    if (s_.substr(pos_, 4) == "-nan") {
      size_t n = 4 + MatchNanPayload(pos_ + 4);
      if (!IsIdentChar(At(pos_ + n))) return Emit(token, TokenKind::kFloat, n), true;
    }
    return false;
  }

  void LexString(Token* token) {
    size_t q = pos_ + 1;
    std::string value;
    while (q < s_.size() && s_[q] != '"') {
      char c = s_[q];
      if (c == '\\' && q + 1 < s_.size()) {
        char e = s_[q + 1];
        q += 2;
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case 'a': value += '\a'; break;
          case 'b': value += '\b'; break;
          case 'f': value += '\f'; break;
          case 'v': value += '\v'; break;
          case 'x': {
            int v = 0, n = 0;
            while (n < 2 && q < s_.size() && IsHexDigit(s_[q])) {
              char h = s_[q];
              v = v * 16 + (IsDigit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
              ++q;
              ++n;
            }
            value += static_cast<char>(v);
            break;
          }
          default:
            if (e >= '0' && e <= '7') {
              int v = e - '0', n = 1;
              while (n < 3 && q < s_.size() && s_[q] >= '0' && s_[q] <= '7') {
                v = v * 8 + (s_[q] - '0');
                ++q;
                ++n;
              }
              value += static_cast<char>(v);
            } else {
              value += e;  // \\ \" \' \? and anything else: the character itself
            }
        }
        continue;
      }
      value += c;
      ++q;
    }
    if (q >= s_.size()) {
      // Unterminated: the rest of the input is one error token.
      Emit(token, TokenKind::kError, s_.size() - pos_);
      return;
    }
    Emit(token, TokenKind::kString, q + 1 - pos_);
    token->value = std::move(value);
  }

  void LexIdentifier(Token* token, bool percent) {
    size_t start = pos_ + (percent ? 1 : 0);
    size_t q = start;
    while (IsIdentChar(At(q))) ++q;
    absl::string_view text = s_.substr(start, q - start);
    if (!percent && (text == "nan" || text == "inf")) {
      size_t n = text == "nan" ? MatchNanPayload(q) : 0;
      Emit(token, TokenKind::kFloat, q + n - pos_);
      return;
    }
    TokenKind kind = percent ? TokenKind::kName : TokenKind::kIdent;
    size_t extra = 0;
    if (At(q) == ':') {
      kind = TokenKind::kNameColon;
      extra = 1;
    } else if (At(q) == '=' && !percent) {
      kind = TokenKind::kAttrName;
      extra = 1;
    }
    token->kind = kind;
    token->text = text;
    Advance(q + extra - pos_);
  }

  void LexOne(Token* token) {
    char c = s_[pos_];
    if (c == 'b' || c == 'f' || c == '?' || IsDigit(c)) {
      if (size_t n = MatchDimLabels(pos_)) return Emit(token, TokenKind::kDimLabels, n);
    }
    if (IsDigit(c) || (c == '-' && (IsDigit(At(pos_ + 1)) || At(pos_ + 1) == '.' ||
                                    At(pos_ + 1) == 'i' || At(pos_ + 1) == 'n')) ||
        (c == '.' && IsDigit(At(pos_ + 1)))) {
      if (LexNumber(token)) return;
    }
    if (IsIdentStart(c)) return LexIdentifier(token, false);
    if (c == '%' && IsIdentChar(At(pos_ + 1))) return LexIdentifier(token, true);
    if (c == '"') return LexString(token);
    switch (c) {
      case '{': return Emit(token, TokenKind::kLBrace, 1);
      case '}': return Emit(token, TokenKind::kRBrace, 1);
      case '(': return Emit(token, TokenKind::kLParen, 1);
      case ')': return Emit(token, TokenKind::kRParen, 1);
      case '[': return Emit(token, TokenKind::kLSquare, 1);
      case ']': return Emit(token, TokenKind::kRSquare, 1);
      case ',': return Emit(token, TokenKind::kComma, 1);
      case ':': return Emit(token, TokenKind::kColon, 1);
      case '=': return Emit(token, TokenKind::kEqual, 1);
      case '*': return Emit(token, TokenKind::kStar, 1);
      case '#': return Emit(token, TokenKind::kHash, 1);
      case '+': return Emit(token, TokenKind::kPlus, 1);
      case '~': return Emit(token, TokenKind::kTilde, 1);
      case '?': return Emit(token, TokenKind::kQuestion, 1);
      case '-':
        if (At(pos_ + 1) == '>') return Emit(token, TokenKind::kArrow, 2);
        break;
      case '<':
        if (At(pos_ + 1) == '=') return Emit(token, TokenKind::kLeq, 2);
        break;
      case '.':
        if (At(pos_ + 1) == '.' && At(pos_ + 2) == '.') return Emit(token, TokenKind::kEllipsis, 3);
        break;
      default:
        break;
    }
    Emit(token, TokenKind::kError, 1);
  }

  absl::string_view s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::string TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof: return "end of file";
    case TokenKind::kError: return "invalid character";
    case TokenKind::kIdent: return "identifier";
    case TokenKind::kName: return "name";
    case TokenKind::kNameColon: return "name followed by ':'";
    case TokenKind::kAttrName: return "attribute name";
    case TokenKind::kInt: return "integer";
    case TokenKind::kFloat: return "number";
    case TokenKind::kString: return "string";
    case TokenKind::kDimLabels: return "dim labels";
    case TokenKind::kDxD: return "dimensions (NxM)";
    case TokenKind::kPad: return "padding (lo_hi)";
    case TokenKind::kLBrace: return "'{'";
    case TokenKind::kRBrace: return "'}'";
    case TokenKind::kLParen: return "'('";
    case TokenKind::kRParen: return "')'";
    case TokenKind::kLSquare: return "'['";
    case TokenKind::kRSquare: return "']'";
    case TokenKind::kComma: return "','";
    case TokenKind::kColon: return "':'";
    case TokenKind::kEqual: return "'='";
    case TokenKind::kArrow: return "'->'";
    case TokenKind::kLeq: return "'<='";
    case TokenKind::kStar: return "'*'";
    case TokenKind::kHash: return "'#'";
    case TokenKind::kPlus: return "'+'";
    case TokenKind::kTilde: return "'~'";
    case TokenKind::kQuestion: return "'?'";
    case TokenKind::kEllipsis: return "'...'";
  }
  return "token";
}

namespace {

// A token's text for a one-line message: control characters (a newline in a
// malformed token) escaped.
std::string Printable(absl::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return absl::CHexEscape(text);
  }
  return std::string(text);
}

}  // namespace

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEof: return "end of file";
    case TokenKind::kName: return absl::StrCat("'%", token.text, "'");
    case TokenKind::kNameColon: return absl::StrCat("'", token.text, ":'");
    case TokenKind::kAttrName: return absl::StrCat("'", token.text, "='");
    case TokenKind::kString: return "string";
    case TokenKind::kError:
      return absl::StrCat("'", Printable(token.text.substr(0, 20)), "'");
    default: return absl::StrCat("'", Printable(token.text), "'");
  }
}

std::vector<Token> LexHlo(absl::string_view text) { return Lexer(text).Run(); }

struct TokenStream::Impl {
  explicit Impl(absl::string_view text) : lexer(text) {}
  Lexer lexer;
};

TokenStream::TokenStream(absl::string_view text) : impl_(std::make_unique<Impl>(text)) {}
TokenStream::~TokenStream() = default;
Token TokenStream::Next() { return impl_->lexer.Next(); }

}  // namespace xjit
