// Unit tests of the HLO text lexer: token kinds and spellings, positions,
// and the number forms that must come out as single tokens.
#include "ir/hlo_text/lexer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xjit {
namespace {

std::vector<std::pair<TokenKind, std::string>> Lex(absl::string_view text) {
  std::vector<std::pair<TokenKind, std::string>> out;
  for (const Token& t : LexHlo(text)) {
    out.push_back({t.kind, t.kind == TokenKind::kString ? t.value : std::string(t.text)});
  }
  return out;
}

using K = TokenKind;

TEST(HloLexerTest, InstructionLine) {
  auto tokens = Lex("ROOT %add.1 = f32[2,3]{1,0} add(f32[2,3] %a, b), metadata={op_name=\"x\"}");
  std::vector<std::pair<TokenKind, std::string>> expected = {
      {K::kIdent, "ROOT"}, {K::kName, "add.1"}, {K::kEqual, "="}, {K::kIdent, "f32"},
      {K::kLSquare, "["}, {K::kInt, "2"}, {K::kComma, ","}, {K::kInt, "3"},
      {K::kRSquare, "]"}, {K::kLBrace, "{"}, {K::kInt, "1"}, {K::kComma, ","},
      {K::kInt, "0"}, {K::kRBrace, "}"}, {K::kIdent, "add"}, {K::kLParen, "("},
      {K::kIdent, "f32"}, {K::kLSquare, "["}, {K::kInt, "2"}, {K::kComma, ","},
      {K::kInt, "3"}, {K::kRSquare, "]"}, {K::kName, "a"}, {K::kComma, ","},
      {K::kIdent, "b"}, {K::kRParen, ")"}, {K::kComma, ","}, {K::kAttrName, "metadata"},
      {K::kLBrace, "{"}, {K::kAttrName, "op_name"}, {K::kString, "x"}, {K::kRBrace, "}"},
      {K::kEof, ""}};
  EXPECT_EQ(tokens, expected);
}

TEST(HloLexerTest, NamesWithColonAndAttributeNames) {
  auto tokens = Lex("(p0: f32[], %p1: s32[]) HloModule m: x=1 control-predecessors={}");
  EXPECT_EQ(tokens[1], std::make_pair(K::kNameColon, std::string("p0")));
  EXPECT_EQ(tokens[6], std::make_pair(K::kNameColon, std::string("p1")));
  EXPECT_EQ(tokens[12], std::make_pair(K::kNameColon, std::string("m")));
  EXPECT_EQ(tokens[13], std::make_pair(K::kAttrName, std::string("x")));
  EXPECT_EQ(tokens[15], std::make_pair(K::kAttrName, std::string("control-predecessors")));
}

TEST(HloLexerTest, Numbers) {
  auto tokens = Lex("1 -2 1.5 .5 1. 1e-3 -2E+4 3x3 1_1x0_0 0_0_1 -1_-2 inf -inf nan -nan "
                    "nan(0x1f) 18446744073709551615");
  std::vector<std::pair<TokenKind, std::string>> expected = {
      {K::kInt, "1"}, {K::kInt, "-2"}, {K::kFloat, "1.5"}, {K::kFloat, ".5"},
      {K::kFloat, "1."}, {K::kFloat, "1e-3"}, {K::kFloat, "-2E+4"}, {K::kDxD, "3x3"},
      {K::kPad, "1_1x0_0"}, {K::kPad, "0_0_1"}, {K::kPad, "-1_-2"}, {K::kFloat, "inf"},
      {K::kFloat, "-inf"}, {K::kFloat, "nan"}, {K::kFloat, "-nan"}, {K::kFloat, "nan(0x1f)"},
      {K::kInt, "18446744073709551615"}, {K::kEof, ""}};
  EXPECT_EQ(tokens, expected);
}

TEST(HloLexerTest, DimLabelsAndPunctuation) {
  auto tokens = Lex("b01f_01io->b01f bf_io->bf 01bf_oi01->bf01 -> <= ... ? * # + ~ :");
  std::vector<std::pair<TokenKind, std::string>> expected = {
      {K::kDimLabels, "b01f_01io->b01f"}, {K::kDimLabels, "bf_io->bf"},
      {K::kDimLabels, "01bf_oi01->bf01"}, {K::kArrow, "->"}, {K::kLeq, "<="},
      {K::kEllipsis, "..."}, {K::kQuestion, "?"}, {K::kStar, "*"}, {K::kHash, "#"},
      {K::kPlus, "+"}, {K::kTilde, "~"}, {K::kColon, ":"}, {K::kEof, ""}};
  EXPECT_EQ(tokens, expected);
}

TEST(HloLexerTest, StringsAndComments) {
  auto tokens = Lex("// line comment\n\"a\\\"b\\n\\x41\\101\" /* block\ncomment */ x");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0], std::make_pair(K::kString, std::string("a\"b\nAA")));
  EXPECT_EQ(tokens[1], std::make_pair(K::kIdent, std::string("x")));
}

TEST(HloLexerTest, PositionsAreOneBased) {
  std::vector<Token> tokens = LexHlo("a\n  %b = c\n\t\"s\"");
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(tokens[0].line, 1);
  EXPECT_EQ(tokens[0].column, 1);
  EXPECT_EQ(tokens[1].line, 2);
  EXPECT_EQ(tokens[1].column, 3);
  EXPECT_EQ(tokens[2].column, 6);
  EXPECT_EQ(tokens[4].line, 3);
  EXPECT_EQ(tokens[4].column, 2);
}

TEST(HloLexerTest, BadCharactersBecomeErrorTokens) {
  auto tokens = Lex("a $ \"unterminated");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[1].first, K::kError);
  EXPECT_EQ(tokens[2].first, K::kError);
  EXPECT_EQ(tokens[3].first, K::kEof);
}

}  // namespace
}  // namespace xjit
