// HLO text lexer (internal to the parser): turns the whole input into a
// vector of tokens, each with its byte offset and 1-based line and column.
// It never fails: a character that starts no token becomes a kError token, so
// that values the parser only skips (JSON inside backend_config=, say) cannot
// stop a parse; the parser reports kError tokens where it needs a real one.
// Token rules follow shared/HLO_TEXT.md §1.
#ifndef XJIT_IR_HLO_TEXT_LEXER_H_
#define XJIT_IR_HLO_TEXT_LEXER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace xjit {

enum class TokenKind : uint8_t {
  kEof,
  kError,        // a character that starts no token
  kIdent,        // foo, f32, true, ENTRY, inf ... (keywords are told apart by text)
  kName,         // %foo (text excludes the '%')
  kNameColon,    // foo: or %foo: (text excludes '%' and ':')
  kAttrName,     // foo= (text excludes '=')
  kInt,          // -?[0-9]+ (text as written)
  kFloat,        // 1.5, 1e-3, -inf, nan, -nan, nan(0x7f) (text as written)
  kString,       // "..." (value holds the unescaped contents)
  kDimLabels,    // b01f_01io->b01f
  kDxD,          // 3x3
  kPad,          // 1_1x0_0, 0_0_1
  kLBrace, kRBrace, kLParen, kRParen, kLSquare, kRSquare,
  kComma, kColon, kEqual, kArrow, kLeq, kStar, kHash, kPlus, kTilde, kQuestion, kEllipsis,
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  absl::string_view text;  // the spelling (see TokenKind for what is excluded)
  size_t offset = 0;       // start of the token in the input, '%' included
  size_t end = 0;          // one past the last character, ':' or '=' included
  int line = 1;
  int column = 1;
  std::string value;       // kString: the unescaped contents
};

// Readable description for error messages: "'foo'", "end of file", "string".
std::string DescribeToken(const Token& token);
// Name of a kind for "expected X" messages.
std::string TokenKindName(TokenKind kind);

// Tokenizes `text`. The result always ends with one kEof token.
std::vector<Token> LexHlo(absl::string_view text);

// The same tokens one at a time, so that the parser lexes only as far as it
// reads: a syntax error early in a huge input is reported without the
// memory for the whole token vector. `text` must outlive the stream.
class TokenStream {
 public:
  explicit TokenStream(absl::string_view text);
  ~TokenStream();
  // The next token; kEof at the end and on every call after it.
  Token Next();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xjit

#endif  // XJIT_IR_HLO_TEXT_LEXER_H_
