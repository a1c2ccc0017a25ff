// HLO text parser (see hlo_parser.h and shared/HLO_TEXT.md).
//
// The whole input is tokenized first (hlo_lexer.h); the parser is a plain
// recursive-descent reader over that token vector with arbitrary lookahead.
// Attributes that change semantics go into the typed InstructionAttributes
// fields of the opcodes that take them; every other attribute is kept as an
// OpaqueAttribute holding the exact source text of its value, found by
// skipping a brace-balanced run of tokens.
//
// Names: instructions defined by nested operands (`add(f32[] multiply(a, b),
// c)`) and computations written inline as attribute values get generated
// names once their scope is complete, so that they cannot collide with names
// written later in the text.
#include "ir/hlo_text/parser.h"

#include <cmath>
#include <deque>
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ir/float_format.h"
#include "ir/hlo_text/lexer.h"
#include "ir/layout_util.h"
#include "ir/shape_inference/shape_inference.h"
#include "ir/status_macros.h"

namespace xjit {
namespace {

// Deeper nesting than this (shapes, literals, nested operands, inline
// computations) is rejected so that hostile input cannot exhaust the stack.
constexpr int kMaxDepth = 200;

bool IsOpen(TokenKind k) {
  return k == TokenKind::kLBrace || k == TokenKind::kLParen || k == TokenKind::kLSquare;
}
bool IsClose(TokenKind k) {
  return k == TokenKind::kRBrace || k == TokenKind::kRParen || k == TokenKind::kRSquare;
}

// The typed attributes of each opcode. Anything else becomes opaque.
bool IsTypedAttribute(Opcode op, absl::string_view name) {
  auto in = [&](std::initializer_list<absl::string_view> names) {
    for (absl::string_view n : names) {
      if (n == name) return true;
    }
    return false;
  };
  switch (op) {
    case Opcode::kCompare: return in({"direction", "type"});
    // scan's other attributes stay opaque; its body is a called computation
    // like any other, so that passes see it is used.
    case Opcode::kScan: return in({"to_apply"});
    case Opcode::kIota: return in({"iota_dimension"});
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return in({"dimensions"});
    case Opcode::kMap:
    case Opcode::kReduce:
      return in({"dimensions", "to_apply"});
    case Opcode::kReshape: return in({"inferred_dimension"});
    case Opcode::kSlice: return in({"slice"});
    case Opcode::kDynamicSlice: return in({"dynamic_slice_sizes"});
    case Opcode::kPad: return in({"padding"});
    case Opcode::kDot:
    case Opcode::kScaledDot:
    case Opcode::kRaggedDot:
      return in({"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
                 "rhs_contracting_dims", "operand_precision", "algorithm"});
    case Opcode::kConvolution:
      return in({"window", "dim_labels", "feature_group_count", "batch_group_count",
                 "operand_precision"});
    case Opcode::kReduceWindow: return in({"window", "to_apply"});
    case Opcode::kSelectAndScatter: return in({"window", "select", "scatter"});
    case Opcode::kGather:
      return in({"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
                 "slice_sizes", "operand_batching_dims", "start_indices_batching_dims",
                 "indices_are_sorted"});
    case Opcode::kScatter:
      return in({"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                 "index_vector_dim", "input_batching_dims", "scatter_indices_batching_dims",
                 "indices_are_sorted", "unique_indices", "to_apply"});
    case Opcode::kSort: return in({"dimensions", "is_stable", "to_apply"});
    case Opcode::kTopK: return in({"k", "largest"});
    case Opcode::kWhile: return in({"condition", "body"});
    case Opcode::kConditional:
      return in({"true_computation", "false_computation", "branch_computations"});
    case Opcode::kCall: return in({"to_apply", "is_composite"});
    case Opcode::kFusion: return in({"kind", "calls", "output_to_operand_aliasing"});
    case Opcode::kCustomCall:
      return in({"custom_call_target", "api_version", "custom_call_has_side_effect",
                 "operand_layout_constraints", "called_computations", "to_apply",
                 "backend_config", "output_to_operand_aliasing", "literal", "window",
                 "dim_labels", "feature_group_count", "batch_group_count"});
    case Opcode::kFft: return in({"fft_type", "fft_length"});
    case Opcode::kTriangularSolve:
      return in({"left_side", "lower", "unit_diagonal", "transpose_a"});
    case Opcode::kCholesky: return in({"lower"});
    case Opcode::kReducePrecision: return in({"exponent_bits", "mantissa_bits"});
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return in({"epsilon", "feature_index"});
    case Opcode::kRng: return in({"distribution"});
    case Opcode::kRngBitGenerator: return in({"algorithm"});
    case Opcode::kRngGetAndUpdateState: return in({"delta"});
    case Opcode::kGetTupleElement: return in({"index"});
    case Opcode::kInfeed: return in({"infeed_config"});
    case Opcode::kOutfeed: return in({"outfeed_config", "outfeed_shape"});
    case Opcode::kSend:
    case Opcode::kRecv:
    case Opcode::kSendDone:
    case Opcode::kRecvDone:
      return in({"channel_id", "is_host_transfer"});
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveReduce:
      return in({"replica_groups", "channel_id", "use_global_device_ids", "constrain_layout",
                 "dimensions", "to_apply"});
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kRaggedAllToAll:
      return in({"replica_groups", "channel_id", "use_global_device_ids", "constrain_layout",
                 "dimensions"});
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return in({"channel_id", "source_target_pairs"});
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return in({"calls"});
    default:
      return false;
  }
}

// The attributes an opcode cannot do without. As in XLA's parser, leaving
// one out is a parse error (with the instruction's position) rather than
// something the verifier or evaluator meets later as a default value.
std::vector<absl::string_view> RequiredAttributes(Opcode op) {
  switch (op) {
    case Opcode::kCompare: return {"direction"};
    case Opcode::kConvolution: return {"dim_labels"};
    case Opcode::kGather:
      return {"offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
              "slice_sizes"};
    case Opcode::kScatter:
      return {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
              "index_vector_dim", "to_apply"};
    case Opcode::kGetTupleElement: return {"index"};
    case Opcode::kIota: return {"iota_dimension"};
    case Opcode::kFusion: return {"kind", "calls"};
    case Opcode::kCustomCall: return {"custom_call_target"};
    case Opcode::kReduce:
    case Opcode::kSort:
      return {"dimensions", "to_apply"};
    case Opcode::kMap:
    case Opcode::kReduceWindow:
    case Opcode::kCall:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
      return {"to_apply"};
    case Opcode::kSelectAndScatter: return {"select", "scatter"};
    case Opcode::kWhile: return {"condition", "body"};
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return {"dimensions"};
    case Opcode::kSlice: return {"slice"};
    case Opcode::kDynamicSlice: return {"dynamic_slice_sizes"};
    case Opcode::kPad: return {"padding"};
    case Opcode::kFft: return {"fft_type", "fft_length"};
    case Opcode::kReducePrecision: return {"exponent_bits", "mantissa_bits"};
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return {"epsilon", "feature_index"};
    case Opcode::kRng: return {"distribution"};
    case Opcode::kTopK: return {"k"};
    default: return {};
  }
}

// Opcodes whose result shape must be written (HLO_TEXT.md §4).
bool RequiresShape(Opcode op) {
  switch (op) {
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kCustomCall:
    case Opcode::kFusion:
    case Opcode::kInfeed:
    case Opcode::kIota:
    case Opcode::kOutfeed:
    case Opcode::kParameter:
    case Opcode::kReducePrecision:
    case Opcode::kReshape:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

// Bytes a zero literal of `shape` would need, saturating at INT64_MAX.
// Array elements of all leaves (saturating).
int64_t LeafElementCount(const Shape& shape) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) {
      const int64_t n = LeafElementCount(element);
      if (n > kMax - total) return kMax;
      total += n;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t count = 1;
  for (int64_t d : shape.dimensions()) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return kMax;
  }
  return count;
}

int64_t ByteSizeEstimate(const Shape& shape) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) {
      int64_t n = ByteSizeEstimate(element);
      if (n > kMax - total) return kMax;
      total += n;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  int64_t bytes = std::max<int64_t>(ByteWidth(shape.element_type()), 1);
  for (int64_t d : shape.dimensions()) {
    if (d < 0) return kMax;
    if (d != 0 && bytes > kMax / d) return kMax;
    bytes *= d;
  }
  return bytes;
}

// One computation being parsed: its name scope and bookkeeping.
struct Scope {
  Computation* computation = nullptr;
  absl::flat_hash_map<std::string, Instruction*> names;
  std::vector<Instruction*> unnamed;  // nested operands, named at the end
  Instruction* root = nullptr;
  struct PendingControl {
    Instruction* instruction;
    std::vector<std::pair<std::string, const Token*>> predecessors;
  };
  std::vector<PendingControl> control;
};

// The computations an instruction's attributes named, by attribute.
struct CalledSlots {
  absl::flat_hash_map<std::string, std::vector<Computation*>> by_name;
};

class Parser {
 public:
  Parser(absl::string_view text, absl::string_view filename, const ParseOptions& options = {})
      : text_(text),
        filename_(filename),
        options_(options),
        lexer_(text),
        last_ellipsis_(text.rfind("...")) {}

  absl::StatusOr<std::unique_ptr<Module>> ParseModule();
  absl::StatusOr<Shape> ParseShapeOnly();
  absl::StatusOr<Literal> ParseLiteralOnly();

 private:
  // ---- Tokens and errors ----
  // Tokens are lexed as the parser reaches them (TokenStream); a deque keeps
  // references to earlier tokens valid as it grows.
  const Token& Peek(size_t k = 0) const {
    const size_t i = pos_ + k;
    while (tokens_.size() <= i && (tokens_.empty() || tokens_.back().kind != TokenKind::kEof)) {
      tokens_.push_back(lexer_.Next());
    }
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Next() {
    const Token& t = Peek();
    Peek(1);
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool Is(TokenKind kind, size_t k = 0) const { return Peek(k).kind == kind; }
  bool IsIdent(absl::string_view text, size_t k = 0) const {
    return Peek(k).kind == TokenKind::kIdent && Peek(k).text == text;
  }
  bool Accept(TokenKind kind) {
    if (!Is(kind)) return false;
    Next();
    return true;
  }
  absl::Status ErrorAt(const Token& t, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(filename_, ":", t.line, ":", t.column, ": error: ", message));
  }
  absl::Status Expected(absl::string_view what) const {
    return ErrorAt(Peek(), absl::StrCat("expected ", what, ", found ", DescribeToken(Peek())));
  }
  absl::Status Expect(TokenKind kind) {
    if (Accept(kind)) return absl::OkStatus();
    return Expected(TokenKindName(kind));
  }
  // The separator inside a list that ends with `close`: a missing ',' is
  // reported as "expected ',' or ')'" since the list may as well have ended.
  absl::Status ExpectListComma(TokenKind close) {
    if (Accept(TokenKind::kComma)) return absl::OkStatus();
    return Expected(absl::StrCat("',' or ", TokenKindName(close)));
  }
  absl::Status Enter(const Token& at) {
    if (++depth_ > kMaxDepth) return ErrorAt(at, "nesting too deep");
    return absl::OkStatus();
  }
  void Leave() { --depth_; }
  // Leaves, when it goes out of scope, the level a successful Enter() entered.
  class NestingLevel {
   public:
    explicit NestingLevel(Parser* parser) : parser_(parser) {}
    NestingLevel(const NestingLevel&) = delete;
    NestingLevel& operator=(const NestingLevel&) = delete;
    ~NestingLevel() { parser_->Leave(); }

   private:
    Parser* parser_;
  };

  // `open element, element, ... close`, each element read by `parse_element`
  // (a callable returning absl::StatusOr<T>).
  template <typename T, typename ParseElement>
  absl::StatusOr<std::vector<T>> ParseList(TokenKind open, TokenKind close,
                                           ParseElement parse_element) {
    XJIT_RETURN_IF_ERROR(Expect(open));
    std::vector<T> elements;
    while (!Is(close)) {
      if (!elements.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(close));
      XJIT_ASSIGN_OR_RETURN(T element, parse_element());
      elements.push_back(std::move(element));
    }
    Next();
    return elements;
  }
  // `open int, int, ... close`.
  absl::StatusOr<std::vector<int64_t>> ParseIntsBetween(TokenKind open, TokenKind close) {
    return ParseList<int64_t>(open, close, [this] { return ParseInt(); });
  }

  // ---- Scalars ----
  absl::StatusOr<int64_t> ParseInt();
  absl::StatusOr<bool> ParseBool();
  absl::StatusOr<double> ParseDouble();
  absl::StatusOr<std::string> ParseString();
  absl::StatusOr<std::string> ParseIdentText(absl::string_view what);
  absl::StatusOr<std::vector<int64_t>> ParseIntList();  // {1,2,3}
  absl::StatusOr<std::vector<std::vector<int64_t>>> ParseIntListList();
  absl::StatusOr<ShapeIndex> ParseShapeIndex() { return ParseIntList(); }
  // Names may be written without '%', so `inf` and `nan` can be names too.
  bool IsNameToken(size_t k = 0) const {
    return Is(TokenKind::kName, k) || Is(TokenKind::kIdent, k) ||
           (Is(TokenKind::kFloat, k) && (Peek(k).text == "inf" || Peek(k).text == "nan"));
  }
  // Skips one attribute value and returns its exact source text.
  absl::StatusOr<std::string> SkipValue();
  // Whether a literal of `shape` starting at the next token can be written
  // in the rest of the text: in a brace list every element takes at least
  // one character unless the contents are elided (`{...}`, zeros). Checked before the
  // literal's buffer is allocated, so that `s8[2147483647] constant({1})`
  // fails at once instead of after zeroing 2 GB.
  // The verifier's size rule (CheckedByteSize), applied before a literal is
  // allocated: padding or tiles may overflow where the element count fits.
  // `what` names the literal in the error ("constant c", "literal").
  // Each literal's bytes count towards ParseOptions::max_constant_bytes,
  // which bounds them all together.
  absl::Status CheckLiteralSize(const Token& at, const Shape& shape, absl::string_view what) {
    absl::StatusOr<int64_t> bytes = CheckedByteSize(shape);
    if (!bytes.ok()) return ErrorAt(at, absl::StrCat(what, ": ", bytes.status().message()));
    // With padding and tiles (a 3x5 constant tiled 2x3000000000 takes 48 GB),
    // or at one element width per element where that is more (packed
    // sub-byte types).
    const int64_t size = std::max(*bytes, ByteSizeEstimate(shape));
    const int64_t limit = options_.max_constant_bytes;
    if (size > limit - constant_bytes_) {
      return ErrorAt(at, absl::StrCat(what, " of ", shape.ToString(), " takes ", size,
                                      " bytes; with the module's other constants (",
                                      constant_bytes_, " bytes) that is more than the ", limit,
                                      " constants may take (xjit --max-constant-bytes, "
                                      "ParseOptions::max_constant_bytes)"));
    }
    constant_bytes_ += size;
    return absl::OkStatus();
  }
  bool LiteralFitsText(const Shape& shape) const {
    // Only a brace list writes one value per element: a scalar written for
    // an array (`bf16[512,128] constant(0.)`) fills all of it, and tuples'
    // elements may be such splats.
    if (!shape.IsArray() || !Is(TokenKind::kLBrace)) return true;
    if (last_ellipsis_ != absl::string_view::npos && Peek().offset <= last_ellipsis_) return true;
    return LeafElementCount(shape) <= static_cast<int64_t>(text_.size() - Peek().offset);
  }

  // ---- Shapes and literals ----
  bool AtShape(size_t k = 0) const;
  absl::StatusOr<Shape> ParseShape();
  // `(shape, shape, ...)`.
  absl::StatusOr<std::vector<Shape>> ParseShapeList() {
    return ParseList<Shape>(TokenKind::kLParen, TokenKind::kRParen,
                            [this] { return ParseShape(); });
  }
  absl::Status ParseLayout(Layout* layout, int64_t rank);
  absl::Status ParseLiteralValue(const Shape& shape, Literal* literal);
  absl::Status ParseArrayLiteral(const Shape& shape, Literal* literal);
  absl::Status ParseArrayLevel(const Shape& shape, Literal* literal, int64_t dim,
                               int64_t* linear);
  absl::Status ParseElement(const Shape& shape, Literal* literal, int64_t linear);
  absl::StatusOr<Literal> ParseShapedLiteral();

  // ---- Module level ----
  absl::Status ParseModuleAttribute(Module* module);
  absl::Status SkipStackFrames();
  absl::Status ParseComputation(Module* module);
  absl::Status ParseComputationBody(Scope* scope);
  absl::Status FinishScope(Scope* scope);

  // ---- Instructions ----
  absl::StatusOr<Instruction*> ParseInstruction(Scope* scope);
  absl::StatusOr<Instruction*> ParseOperand(Scope* scope);
  // Parses `opcode(operands) [, attributes]` after the name and shape.
  absl::StatusOr<std::unique_ptr<Instruction>> ParseOpcodeAndRest(
      Scope* scope, std::optional<Shape> shape, const Token& opcode_token, bool allow_attributes);
  absl::Status ParseAttribute(Scope* scope, Instruction* instruction, CalledSlots* slots,
                              absl::flat_hash_set<std::string>* seen);
  absl::Status ParseTypedAttribute(const Token& name, Instruction* instruction,
                                   CalledSlots* slots);
  absl::StatusOr<Computation*> ParseComputationRef();
  absl::StatusOr<std::vector<Computation*>> ParseComputationList();
  absl::StatusOr<Window> ParseWindow();
  absl::Status ParseDimLabels(ConvolutionDimensionNumbers* dnums);
  absl::StatusOr<PaddingConfig> ParsePaddingConfig();
  absl::StatusOr<std::vector<SliceDimension>> ParseSliceConfig();
  absl::StatusOr<std::vector<std::vector<int64_t>>> ParseReplicaGroups();
  // `{out}: (number, {index}` of an alias entry, up to what may follow before
  // its ')': the shared head of input_output_alias= (number = parameter) and
  // output_to_operand_aliasing= (number = operand).
  absl::Status ParseAliasHead(ShapeIndex* output_index, int64_t* number, ShapeIndex* index);
  absl::StatusOr<std::vector<OutputOperandAlias>> ParseOutputOperandAliasing();
  absl::Status AssembleCalled(const Token& at, Instruction* instruction, CalledSlots* slots);
  // `op-start(...)`: moves `wrapped` (whose shape is the async tuple) into a
  // new computation and returns the async-start that calls it.
  absl::StatusOr<std::unique_ptr<Instruction>> WrapInAsyncStart(
      std::unique_ptr<Instruction> wrapped, const std::vector<Instruction*>& operands,
      const Token& at);

  absl::string_view text_;
  std::string filename_;
  ParseOptions options_;
  // Bytes of the constants parsed so far (CheckLiteralSize).
  int64_t constant_bytes_ = 0;
  // The instruction whose opcode and operands are being parsed.
  std::string instruction_name_;
  mutable TokenStream lexer_;
  const size_t last_ellipsis_;  // Where the last `...` of the text starts (npos: none).
  mutable std::deque<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  Module* module_ = nullptr;
  absl::flat_hash_map<std::string, Computation*> computations_;
  std::vector<Computation*> inline_computations_;  // named at the end
};

// ===================================================================
// Scalars

absl::StatusOr<int64_t> Parser::ParseInt() {
  if (!Is(TokenKind::kInt)) return Expected("integer");
  int64_t value;
  if (!absl::SimpleAtoi(Peek().text, &value)) {
    return ErrorAt(Peek(), absl::StrCat("integer out of range: ", Peek().text));
  }
  Next();
  return value;
}

absl::StatusOr<bool> Parser::ParseBool() {
  if (IsIdent("true")) return Next(), true;
  if (IsIdent("false")) return Next(), false;
  return Expected("'true' or 'false'");
}

absl::StatusOr<double> Parser::ParseDouble() {
  const Token& t = Peek();
  if (t.kind != TokenKind::kInt && t.kind != TokenKind::kFloat) return Expected("number");
  std::string text(t.text);
  double value;
  if (text == "inf") {
    value = std::numeric_limits<double>::infinity();
  } else if (text == "-inf") {
    value = -std::numeric_limits<double>::infinity();
  } else if (absl::StartsWith(text, "nan") || absl::StartsWith(text, "-nan")) {
    value = text[0] == '-' ? -std::numeric_limits<double>::quiet_NaN()
                           : std::numeric_limits<double>::quiet_NaN();
  } else {
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    if (end == nullptr || *end != '\0') return ErrorAt(t, absl::StrCat("invalid number ", text));
  }
  Next();
  return value;
}

absl::StatusOr<std::string> Parser::ParseString() {
  if (!Is(TokenKind::kString)) return Expected("string");
  return Next().value;
}

absl::StatusOr<std::string> Parser::ParseIdentText(absl::string_view what) {
  if (!Is(TokenKind::kIdent)) return Expected(what);
  return std::string(Next().text);
}

absl::StatusOr<std::vector<int64_t>> Parser::ParseIntList() {
  return ParseIntsBetween(TokenKind::kLBrace, TokenKind::kRBrace);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> Parser::ParseIntListList() {
  return ParseList<std::vector<int64_t>>(TokenKind::kLBrace, TokenKind::kRBrace,
                                         [this] { return ParseIntList(); });
}

absl::StatusOr<std::string> Parser::SkipValue() {
  const Token& first = Peek();
  size_t end = first.offset;
  bool any = false;
  while (true) {
    const Token& t = Peek();
    if (t.kind == TokenKind::kEof) break;
    if (any) {
      // A value continues only with an opening bracket written right after
      // the previous part (`f32[2]{0}`, `devices=[2]0,1` stays inside braces).
      if (!IsOpen(t.kind) || t.offset != end) break;
    }
    if (IsOpen(t.kind)) {
      std::vector<TokenKind> stack;
      while (true) {
        const Token& u = Peek();
        if (u.kind == TokenKind::kEof) return Expected("closing bracket");
        if (IsOpen(u.kind)) {
          if (stack.size() >= 1000) return ErrorAt(u, "nesting too deep");
          stack.push_back(u.kind);
        } else if (IsClose(u.kind)) {
          TokenKind open = stack.back();
          bool match = (open == TokenKind::kLBrace && u.kind == TokenKind::kRBrace) ||
                       (open == TokenKind::kLParen && u.kind == TokenKind::kRParen) ||
                       (open == TokenKind::kLSquare && u.kind == TokenKind::kRSquare);
          if (!match) return ErrorAt(u, absl::StrCat("unbalanced ", DescribeToken(u)));
          stack.pop_back();
        }
        end = u.end;
        Next();
        if (stack.empty()) break;
      }
    } else {
      if (any) break;
      if (t.kind == TokenKind::kComma || IsClose(t.kind) || t.kind == TokenKind::kError) {
        return Expected("attribute value");
      }
      end = t.end;
      Next();
    }
    any = true;
  }
  if (!any) return Expected("attribute value");
  return std::string(text_.substr(first.offset, end - first.offset));
}

// ===================================================================
// Shapes

bool Parser::AtShape(size_t k) const {
  if (Is(TokenKind::kLParen, k)) return true;
  if (Is(TokenKind::kIdent, k) && Is(TokenKind::kLSquare, k + 1)) {
    auto type = ParseElementType(Peek(k).text);
    return type.has_value() && *type != ElementType::kTuple;
  }
  return false;
}

absl::StatusOr<Shape> Parser::ParseShape() {
  const Token& start = Peek();
  XJIT_RETURN_IF_ERROR(Enter(start));
  NestingLevel level(this);
  if (Is(TokenKind::kLParen)) {
    XJIT_ASSIGN_OR_RETURN(std::vector<Shape> elements, ParseShapeList());
    return Shape::Tuple(std::move(elements));
  }
  if (IsIdent("b") && Is(TokenKind::kLParen, 1)) {
    return ErrorAt(start, "buffer shapes b(...) are not supported");
  }
  if (!Is(TokenKind::kIdent)) return Expected("shape");
  auto type = ParseElementType(Peek().text);
  if (!type.has_value() || *type == ElementType::kTuple) return Expected("shape");
  Next();
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLSquare));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  while (!Is(TokenKind::kRSquare)) {
    if (!dims.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRSquare));
    if (Accept(TokenKind::kQuestion)) {
      dims.push_back(Shape::kUnboundedSize);
      dynamic.push_back(true);
      continue;
    }
    bool bounded = Accept(TokenKind::kLeq);
    const Token& t = Peek();
    XJIT_ASSIGN_OR_RETURN(int64_t d, ParseInt());
    if (d < 0) return ErrorAt(t, "dimension size must be non-negative");
    dims.push_back(d);
    dynamic.push_back(bounded);
  }
  Next();
  if (*type == ElementType::kToken || *type == ElementType::kOpaque) {
    if (!dims.empty()) return ErrorAt(start, "token and opaque shapes have no dimensions");
    return *type == ElementType::kToken ? Shape::Token() : Shape::Opaque();
  }
  Shape shape = Shape::Array(*type, dims);
  for (size_t i = 0; i < dynamic.size(); ++i) shape.set_dynamic_dimension(i, dynamic[i]);
  if (Is(TokenKind::kLBrace) && (Is(TokenKind::kInt, 1) || Is(TokenKind::kColon, 1))) {
    Layout layout;
    XJIT_RETURN_IF_ERROR(ParseLayout(&layout, shape.rank()));
    shape.set_layout(std::move(layout));
  }
  return shape;
}

absl::Status Parser::ParseLayout(Layout* layout, int64_t rank) {
  const Token& open = Peek();
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
  while (Is(TokenKind::kInt)) {
    XJIT_ASSIGN_OR_RETURN(int64_t d, ParseInt());
    layout->minor_to_major.push_back(d);
    if (!Accept(TokenKind::kComma)) break;
  }
  if (static_cast<int64_t>(layout->minor_to_major.size()) != rank) {
    return ErrorAt(open, absl::StrCat("layout has ", layout->minor_to_major.size(),
                                      " dimensions but the shape has rank ", rank));
  }
  std::vector<bool> used(rank, false);
  for (int64_t d : layout->minor_to_major) {
    if (d < 0 || d >= rank || used[d]) {
      return ErrorAt(open, "layout minor_to_major is not a permutation of the dimensions");
    }
    used[d] = true;
  }
  if (Accept(TokenKind::kColon)) {
    auto paren_int = [this]() -> absl::StatusOr<int64_t> {
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
      XJIT_ASSIGN_OR_RETURN(int64_t v, ParseInt());
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
      return v;
    };
    auto paren_type = [this]() -> absl::StatusOr<ElementType> {
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
      auto type = Is(TokenKind::kIdent) ? ParseElementType(Peek().text) : std::nullopt;
      if (!type.has_value() || !IsArrayElementType(*type)) return Expected("primitive type");
      Next();
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
      return *type;
    };
    while (!Is(TokenKind::kRBrace)) {
      const Token& item = Peek();
      if (item.kind == TokenKind::kHash) {
        Next();
        XJIT_ASSIGN_OR_RETURN(layout->index_type, paren_type());
        continue;
      }
      if (item.kind == TokenKind::kStar) {
        Next();
        XJIT_ASSIGN_OR_RETURN(layout->pointer_type, paren_type());
        continue;
      }
      if (item.kind != TokenKind::kIdent) return Expected("layout item or '}'");
      absl::string_view key = item.text;
      Next();
      if (key == "D") {
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
        while (!Is(TokenKind::kRParen)) {
          if (!layout->dim_level_types.empty()) {
            XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRParen));
          }
          XJIT_ASSIGN_OR_RETURN(std::string dlt, ParseIdentText("dim level type"));
          if (dlt != "D" && dlt != "C" && dlt != "S" && dlt != "H") {
            return ErrorAt(item, absl::StrCat("unknown dim level type '", dlt, "'"));
          }
          if (Accept(TokenKind::kPlus)) dlt += "+";
          if (Accept(TokenKind::kTilde)) dlt += "~";
          layout->dim_level_types.push_back(dlt);
        }
        Next();
      } else if (key == "T") {
        if (!Is(TokenKind::kLParen)) return Expected("'(' after T");
        while (Accept(TokenKind::kLParen)) {
          Tile tile;
          while (!Is(TokenKind::kRParen)) {
            if (!tile.dimensions.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRParen));
            if (Accept(TokenKind::kStar)) {
              tile.dimensions.push_back(Tile::kCombineDimension);
            } else {
              const Token& t = Peek();
              XJIT_ASSIGN_OR_RETURN(int64_t d, ParseInt());
              if (d < 0) return ErrorAt(t, "tile dimension must be non-negative");
              tile.dimensions.push_back(d);
            }
          }
          Next();
          layout->tiles.push_back(std::move(tile));
        }
      } else if (key == "L") {
        XJIT_ASSIGN_OR_RETURN(layout->tail_padding_alignment_in_elements, paren_int());
      } else if (key == "E") {
        XJIT_ASSIGN_OR_RETURN(layout->element_size_in_bits, paren_int());
      } else if (key == "S") {
        XJIT_ASSIGN_OR_RETURN(layout->memory_space, paren_int());
      } else if (key == "M") {
        XJIT_ASSIGN_OR_RETURN(layout->dynamic_shape_metadata_prefix_bytes, paren_int());
      } else if (key == "SC") {
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
        XJIT_ASSIGN_OR_RETURN(int64_t dim, ParseInt());
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kColon));
        std::vector<int64_t> indices;
        do {
          XJIT_ASSIGN_OR_RETURN(int64_t idx, ParseInt());
          indices.push_back(idx);
        } while (Accept(TokenKind::kComma));
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
        layout->split_configs.push_back(absl::StrCat(dim, ":", absl::StrJoin(indices, ",")));
      } else if (key == "P") {
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
        XJIT_ASSIGN_OR_RETURN(Shape physical, ParseShape());
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
        layout->physical_shape = physical.ToString();
      } else if (key == "PD") {
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
        while (!Is(TokenKind::kRParen)) {
          if (!layout->padded_dimensions.empty()) {
            XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRParen));
          }
          XJIT_ASSIGN_OR_RETURN(int64_t d, ParseInt());
          layout->padded_dimensions.push_back(d);
        }
        Next();
      } else if (key == "PV") {
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
        XJIT_ASSIGN_OR_RETURN(std::string v, ParseIdentText("padding value"));
        if (v == "zero") {
          layout->padding_value = PaddingValue::kZero;
        } else if (v == "one") {
          layout->padding_value = PaddingValue::kOne;
        } else if (v == "lowest") {
          layout->padding_value = PaddingValue::kLowest;
        } else if (v == "highest") {
          layout->padding_value = PaddingValue::kHighest;
        } else {
          return ErrorAt(item, absl::StrCat("unknown padding value '", v, "'"));
        }
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
      } else {
        return ErrorAt(item, absl::StrCat("unknown layout item '", key, "'"));
      }
    }
  }
  return Expect(TokenKind::kRBrace);
}

// ===================================================================
// Literals

std::vector<int64_t> LinearToIndex(absl::Span<const int64_t> dims, int64_t linear) {
  std::vector<int64_t> index(dims.size());
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    index[i] = dims[i] == 0 ? 0 : linear % dims[i];
    linear = dims[i] == 0 ? 0 : linear / dims[i];
  }
  return index;
}

// Bits of a NaN of `type` with the given sign and mantissa payload (0 for the
// canonical quiet NaN).
uint64_t NanBits(ElementType type, bool negative, uint64_t payload) {
  double nan = negative ? -std::numeric_limits<double>::quiet_NaN()
                        : std::numeric_limits<double>::quiet_NaN();
  if (!FloatHasInfinity(type) || payload == 0) return DoubleToFloatBits(type, nan);
  int e = FloatExponentBits(type), m = FloatMantissaBits(type);
  uint64_t mantissa_mask = (uint64_t{1} << m) - 1;
  uint64_t bits = (((uint64_t{1} << e) - 1) << m) | (payload & mantissa_mask);
  if ((payload & mantissa_mask) == 0) bits |= uint64_t{1} << (m - 1);
  if (negative) bits |= uint64_t{1} << (e + m);
  return bits;
}

absl::Status Parser::ParseElement(const Shape& shape, Literal* literal, int64_t linear) {
  ElementType type = shape.element_type();
  const Token& t = Peek();
  if (IsComplex(type)) {
    std::complex<double> value;
    if (Accept(TokenKind::kLParen)) {
      XJIT_ASSIGN_OR_RETURN(double re, ParseDouble());
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kComma));
      XJIT_ASSIGN_OR_RETURN(double im, ParseDouble());
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
      value = {re, im};
    } else {
      XJIT_ASSIGN_OR_RETURN(double re, ParseDouble());
      value = {re, 0.0};
    }
    literal->SetComplex(LinearToIndex(shape.dimensions(), linear), value);
    return absl::OkStatus();
  }
  if (IsPred(type)) {
    if (IsIdent("true") || IsIdent("false")) {
      literal->SetBitsLinear(linear, Next().text == "true" ? 1 : 0);
      return absl::OkStatus();
    }
    if (t.kind == TokenKind::kInt) {
      literal->SetBitsLinear(linear, t.text == "0" ? 0 : 1);
      Next();
      return absl::OkStatus();
    }
    return Expected("'true' or 'false'");
  }
  if (IsInteger(type)) {
    if (IsIdent("true") || IsIdent("false")) {
      literal->SetBitsLinear(linear, Next().text == "true" ? 1 : 0);
      return absl::OkStatus();
    }
    if (t.kind != TokenKind::kInt) return Expected(absl::StrCat(ElementTypeName(type), " value"));
    int bits = BitWidth(type);
    uint64_t mask = bits >= 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
    uint64_t raw;
    bool in_range;
    int64_t s;
    uint64_t u;
    if (absl::SimpleAtoi(t.text, &s)) {
      raw = static_cast<uint64_t>(s);
      if (IsSignedInteger(type)) {
        int64_t lo = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
        int64_t hi = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
        in_range = s >= lo && s <= hi;
      } else {
        in_range = s >= 0 && static_cast<uint64_t>(s) <= mask;
      }
    } else if (absl::SimpleAtoi(t.text, &u)) {
      raw = u;
      in_range = IsUnsignedInteger(type) && u <= mask;
    } else {
      in_range = false;
      raw = 0;
    }
    if (!in_range) {
      return ErrorAt(t, absl::StrCat("value ", t.text, " is out of range for ",
                                     ElementTypeName(type)));
    }
    literal->SetBitsLinear(linear, raw & mask);
    Next();
    return absl::OkStatus();
  }
  if (IsFloat(type)) {
    if (t.kind != TokenKind::kInt && t.kind != TokenKind::kFloat) {
      return Expected(absl::StrCat(ElementTypeName(type), " value"));
    }
    absl::string_view text = t.text;
    bool negative = absl::ConsumePrefix(&text, "-");
    if (absl::StartsWith(text, "nan")) {
      uint64_t payload = 0;
      if (absl::ConsumePrefix(&text, "nan(0x") || absl::ConsumePrefix(&text, "nan(0X")) {
        text.remove_suffix(1);
        if (text.size() > 16 || !absl::SimpleHexAtoi(text, &payload)) {
          return ErrorAt(t, "invalid NaN payload");
        }
      }
      literal->SetBitsLinear(linear, NanBits(type, negative, payload));
      Next();
      return absl::OkStatus();
    }
    XJIT_ASSIGN_OR_RETURN(double v, ParseDouble());
    uint64_t bits;
    if (type == ElementType::kF64) {
      std::memcpy(&bits, &v, 8);
    } else if (type == ElementType::kF32) {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      bits = b;
    } else {
      bits = DoubleToFloatBits(type, v);
    }
    literal->SetBitsLinear(linear, bits);
    return absl::OkStatus();
  }
  return ErrorAt(t, absl::StrCat("no literal values for ", ElementTypeName(type)));
}

absl::Status Parser::ParseArrayLevel(const Shape& shape, Literal* literal, int64_t dim,
                                     int64_t* linear) {
  const Token& open = Peek();
  XJIT_RETURN_IF_ERROR(Enter(open));
  NestingLevel level(this);
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
  int64_t block = 1;
  for (int64_t d = dim; d < shape.rank(); ++d) block *= shape.dimensions(d);
  if (Accept(TokenKind::kEllipsis)) {
    // Elided contents: zeros.
    *linear += block;
    return Expect(TokenKind::kRBrace);
  }
  int64_t count = 0;
  int64_t expected = shape.dimensions(dim);
  while (!Is(TokenKind::kRBrace)) {
    if (count > 0) Accept(TokenKind::kComma);
    if (Is(TokenKind::kRBrace)) break;
    if (count >= expected) {
      return ErrorAt(Peek(), absl::StrCat("too many elements in dimension ", dim,
                                          " (expected ", expected, ")"));
    }
    if (dim + 1 < shape.rank()) {
      XJIT_RETURN_IF_ERROR(ParseArrayLevel(shape, literal, dim + 1, linear));
    } else {
      XJIT_RETURN_IF_ERROR(ParseElement(shape, literal, *linear));
      ++*linear;
    }
    ++count;
  }
  if (count != expected) {
    return ErrorAt(Peek(), absl::StrCat("expected ", expected, " elements in dimension ", dim,
                                        ", found ", count));
  }
  Next();
  return absl::OkStatus();
}

absl::Status Parser::ParseArrayLiteral(const Shape& shape, Literal* literal) {
  if (shape.rank() == 0) return ParseElement(shape, literal, 0);
  if (!Is(TokenKind::kLBrace)) {
    // A bare scalar for an array sets element 0 only (XLA's quirk).
    if (shape.element_count() == 0) return Expected("'{'");
    return ParseElement(shape, literal, 0);
  }
  int64_t linear = 0;
  return ParseArrayLevel(shape, literal, 0, &linear);
}

absl::Status Parser::ParseLiteralValue(const Shape& shape, Literal* literal) {
  const Token& start = Peek();
  XJIT_RETURN_IF_ERROR(Enter(start));
  NestingLevel level(this);
  if (shape.IsTuple()) {
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (i > 0) XJIT_RETURN_IF_ERROR(Expect(TokenKind::kComma));
      const Shape& element_shape = shape.tuple_shapes(i);
      // Elements may repeat their shape ("(f32[2] {1, 2}, s32[] 3)").
      if (element_shape.IsArray() && AtShape() && !Is(TokenKind::kLParen)) {
        const Token& at = Peek();
        XJIT_ASSIGN_OR_RETURN(Shape written, ParseShape());
        if (!written.Compatible(element_shape)) {
          return ErrorAt(at, absl::StrCat("literal element shape ", written.ToString(),
                                          " does not match ", element_shape.ToString()));
        }
      }
      XJIT_RETURN_IF_ERROR(ParseLiteralValue(element_shape, &(*literal->mutable_elements())[i]));
    }
    return Expect(TokenKind::kRParen);
  }
  if (shape.IsToken() || shape.IsOpaque()) return ErrorAt(start, "no literal for this shape");
  return ParseArrayLiteral(shape, literal);
}


absl::StatusOr<Literal> Parser::ParseShapedLiteral() {
  const Token& start = Peek();
  if (Is(TokenKind::kLParen)) {
    // Either "(shape, shape) (values)" or "(shape value, shape value)".
    size_t saved = pos_;
    Next();
    if (Is(TokenKind::kRParen) || AtShape()) {
      bool empty = Is(TokenKind::kRParen);
      if (!empty) {
        XJIT_RETURN_IF_ERROR(Enter(start));
        auto first = ParseShape();
        Leave();
        XJIT_RETURN_IF_ERROR(first.status());
      }
      bool shape_form = empty || Is(TokenKind::kComma) || Is(TokenKind::kRParen);
      pos_ = saved;
      if (!shape_form) {
        Next();
        std::vector<Literal> elements;
        while (!Is(TokenKind::kRParen)) {
          if (!elements.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRParen));
          XJIT_RETURN_IF_ERROR(Enter(start));
          auto element = ParseShapedLiteral();
          Leave();
          XJIT_RETURN_IF_ERROR(element.status());
          elements.push_back(std::move(*element));
        }
        Next();
        return Literal::MakeTuple(std::move(elements));
      }
    } else {
      pos_ = saved;
    }
  }
  XJIT_ASSIGN_OR_RETURN(Shape shape, ParseShape());
  XJIT_RETURN_IF_ERROR(CheckLiteralSize(start, shape, "literal"));
  if (!LiteralFitsText(shape)) {
    return ErrorAt(start, absl::StrCat("a literal of ", shape.ToString(false),
                                       " has more elements than the rest of the text"));
  }
  Literal literal(shape);
  XJIT_RETURN_IF_ERROR(ParseLiteralValue(shape, &literal));
  return literal;
}

// ===================================================================
// Module

absl::StatusOr<std::unique_ptr<Module>> Parser::ParseModule() {
  auto module = std::make_unique<Module>("");
  module_ = module.get();
  bool has_header = false;
  // `module @name` / `module attributes {...}` (a computation may be called
  // "module", so the next token decides).
  const bool mlir_module = IsIdent("module") && Peek(1).kind != TokenKind::kLBrace &&
                           Peek(1).kind != TokenKind::kLParen;
  if (mlir_module || IsIdent("func.func")) {
    // MLIR (StableHLO, MHLO) text, jax's `.as_text()` default: say how to
    // get HLO text instead of failing at its second token.
    return ErrorAt(Peek(), "this is MLIR (StableHLO) text, not HLO text: xjit reads HLO text, "
                           "as XLA dumps it (--xla_dump_to) or as JAX writes it with "
                           "jax.jit(f).lower(...).as_text(dialect=\"hlo\")");
  }
  if (IsIdent("HloModule")) {
    has_header = true;
    Next();
    if (!Is(TokenKind::kName) && !Is(TokenKind::kIdent) && !Is(TokenKind::kNameColon)) {
      return Expected("module name");
    }
    module->set_name(std::string(Next().text));
    while (Accept(TokenKind::kComma)) XJIT_RETURN_IF_ERROR(ParseModuleAttribute(module.get()));
    XJIT_RETURN_IF_ERROR(SkipStackFrames());
  }
  if (!has_header) module->set_name("module");
  Computation* entry = nullptr;
  while (!Is(TokenKind::kEof)) {
    bool is_entry = IsIdent("ENTRY");
    const Token& at = Peek();
    XJIT_RETURN_IF_ERROR(ParseComputation(module.get()));
    if (is_entry) {
      if (entry != nullptr) return ErrorAt(at, "more than one ENTRY computation");
      entry = module->computations().back().get();
    }
  }
  if (module->computations().empty()) return Expected("computation");
  module->set_entry(entry != nullptr ? entry : module->computations().back().get());
  // Name the inline computations, avoiding every written name.
  absl::flat_hash_set<std::string> used;
  for (const auto& c : module->computations()) used.insert(c->name());
  int64_t counter = 0;
  for (Computation* c : inline_computations_) {
    std::string name;
    do {
      name = absl::StrCat("inline_computation.", ++counter);
    } while (used.contains(name));
    used.insert(name);
    c->set_name(name);
  }
  return module;
}

absl::Status Parser::SkipStackFrames() {
  auto is_section = [this]() {
    return IsIdent("FileNames") || IsIdent("FunctionNames") || IsIdent("FileLocations") ||
           IsIdent("StackFrames");
  };
  if (!is_section()) return absl::OkStatus();
  while (is_section()) {
    Next();
    while (Is(TokenKind::kInt)) {
      Next();
      if (Is(TokenKind::kString)) {
        Next();
      } else if (Is(TokenKind::kLBrace)) {
        XJIT_RETURN_IF_ERROR(SkipValue().status());
      } else {
        return Expected("string or '{'");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseModuleAttribute(Module* module) {
  if (!Is(TokenKind::kAttrName)) return Expected("module attribute");
  const Token& name = Next();
  absl::string_view key = name.text;
  if (key == "is_scheduled") {
    XJIT_ASSIGN_OR_RETURN(bool v, ParseBool());
    module->set_is_scheduled(v);
  } else if (key == "replica_count") {
    XJIT_ASSIGN_OR_RETURN(int64_t v, ParseInt());
    module->set_replica_count(v);
  } else if (key == "num_partitions") {
    XJIT_ASSIGN_OR_RETURN(int64_t v, ParseInt());
    module->set_num_partitions(v);
  } else if (key == "entry_computation_layout") {
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
    XJIT_ASSIGN_OR_RETURN(std::vector<Shape> params, ParseShapeList());
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kArrow));
    XJIT_ASSIGN_OR_RETURN(Shape result, ParseShape());
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRBrace));
    module->set_entry_computation_layout(std::move(params), std::move(result));
  } else if (key == "input_output_alias") {
    auto parse_alias = [&]() -> absl::StatusOr<InputOutputAlias> {
      InputOutputAlias alias;
      XJIT_RETURN_IF_ERROR(
          ParseAliasHead(&alias.output_index, &alias.parameter_number, &alias.parameter_index));
      if (Accept(TokenKind::kComma)) {
        XJIT_ASSIGN_OR_RETURN(alias.kind, ParseIdentText("'may-alias' or 'must-alias'"));
        if (alias.kind != "may-alias" && alias.kind != "must-alias") {
          return ErrorAt(name, absl::StrCat("unknown alias kind '", alias.kind, "'"));
        }
      }
      XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
      return alias;
    };
    XJIT_ASSIGN_OR_RETURN(*module->mutable_input_output_aliases(),
                          ParseList<InputOutputAlias>(TokenKind::kLBrace, TokenKind::kRBrace,
                                                      parse_alias));
  } else {
    XJIT_ASSIGN_OR_RETURN(std::string value, SkipValue());
    module->mutable_opaque_attributes()->push_back({std::string(key), std::move(value)});
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseComputation(Module* module) {
  if (IsIdent("ENTRY")) Next();  // the caller records which one is the entry
  const Token& name_token = Peek();
  if (!IsNameToken()) return Expected("computation name");
  std::string name(Next().text);
  if (computations_.contains(name)) {
    return ErrorAt(name_token, absl::StrCat("duplicate computation name '%", name, "'"));
  }
  if (Accept(TokenKind::kLParen)) {
    bool first = true;
    while (!Is(TokenKind::kRParen)) {
      if (!first) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRParen));
      first = false;
      if (Is(TokenKind::kNameColon)) {
        Next();
      } else if ((IsNameToken() || Is(TokenKind::kInt)) && Is(TokenKind::kColon, 1)) {
        Next();
        Next();
      } else {
        return Expected("parameter name");
      }
      XJIT_RETURN_IF_ERROR(ParseShape().status());
    }
    Next();
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kArrow));
    XJIT_RETURN_IF_ERROR(ParseShape().status());
  }
  auto computation = std::make_unique<Computation>(name);
  Scope scope;
  scope.computation = computation.get();
  XJIT_RETURN_IF_ERROR(ParseComputationBody(&scope));
  if (Is(TokenKind::kComma) && Is(TokenKind::kAttrName, 1) &&
      Peek(1).text == "execution_thread") {
    Next();
    Next();
    XJIT_ASSIGN_OR_RETURN(std::string thread, ParseString());
    computation->set_execution_thread(std::move(thread));
  }
  computations_[name] = module->AddComputation(std::move(computation));
  return absl::OkStatus();
}

absl::Status Parser::ParseComputationBody(Scope* scope) {
  const Token& open = Peek();
  XJIT_RETURN_IF_ERROR(Enter(open));
  NestingLevel level(this);
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
  while (!Is(TokenKind::kRBrace)) {
    if (Is(TokenKind::kEof)) return Expected("instruction or '}'");
    XJIT_RETURN_IF_ERROR(ParseInstruction(scope).status());
  }
  if (scope->computation->instructions().empty()) {
    return ErrorAt(Peek(), "a computation needs at least one instruction");
  }
  Next();
  return FinishScope(scope);
}

absl::Status Parser::FinishScope(Scope* scope) {
  for (auto& pending : scope->control) {
    for (auto& [name, token] : pending.predecessors) {
      auto it = scope->names.find(name);
      if (it == scope->names.end()) {
        return ErrorAt(*token, absl::StrCat("use of undefined value '%", name, "'"));
      }
      pending.instruction->AddControlPredecessor(it->second);
    }
  }
  absl::flat_hash_map<std::string, int64_t> counters;
  for (Instruction* instruction : scope->unnamed) {
    std::string base(OpcodeName(instruction->opcode()));
    std::string name;
    do {
      name = absl::StrCat(base, ".", ++counters[base]);
    } while (scope->names.contains(name));
    scope->names[name] = instruction;
    instruction->set_name(name);
  }
  const auto& instructions = scope->computation->instructions();
  scope->computation->set_root(scope->root != nullptr ? scope->root : instructions.back().get());
  return absl::OkStatus();
}

// ===================================================================
// Instructions

absl::StatusOr<Instruction*> Parser::ParseInstruction(Scope* scope) {
  bool is_root = false;
  const Token& root_token = Peek();
  if (IsIdent("ROOT") && !Is(TokenKind::kEqual, 1)) {
    Next();
    is_root = true;
  }
  const Token& name_token = Peek();
  std::string name;
  if (Is(TokenKind::kAttrName)) {
    name = std::string(Next().text);
  } else if (IsNameToken() && Is(TokenKind::kEqual, 1)) {
    name = std::string(Next().text);
    Next();
  } else if (IsNameToken()) {
    // A name that is not followed by '=': point at what came instead.
    Next();
    return Expected("'=' after the instruction name");
  } else {
    return Expected("instruction name");
  }
  if (scope->names.contains(name)) {
    return ErrorAt(name_token, absl::StrCat("duplicate instruction name '%", name, "'"));
  }
  std::optional<Shape> shape;
  if (AtShape()) {
    XJIT_ASSIGN_OR_RETURN(shape, ParseShape());
  }
  const Token& opcode_token = Peek();
  instruction_name_ = name;
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Instruction> instruction,
                        ParseOpcodeAndRest(scope, std::move(shape), opcode_token, true));
  instruction->set_name(name);
  Instruction* raw = scope->computation->AddInstruction(std::move(instruction));
  scope->names[name] = raw;
  if (is_root) {
    if (scope->root != nullptr) return ErrorAt(root_token, "more than one ROOT instruction");
    scope->root = raw;
  }
  return raw;
}

absl::StatusOr<Instruction*> Parser::ParseOperand(Scope* scope) {
  const Token& start = Peek();
  std::optional<Shape> shape;
  if (AtShape()) {
    XJIT_ASSIGN_OR_RETURN(shape, ParseShape());
  }
  if (Is(TokenKind::kIdent) && Is(TokenKind::kLParen, 1)) {
    const Token& opcode_token = Peek();
    XJIT_RETURN_IF_ERROR(Enter(opcode_token));
    const std::string outer = instruction_name_;
    instruction_name_ = absl::StrCat("in an operand of ", outer);
    auto nested = ParseOpcodeAndRest(scope, std::move(shape), opcode_token, false);
    instruction_name_ = outer;
    Leave();
    XJIT_RETURN_IF_ERROR(nested.status());
    Instruction* raw = scope->computation->AddInstruction(std::move(*nested));
    scope->unnamed.push_back(raw);
    return raw;
  }
  if (!IsNameToken()) return Expected("operand");
  const Token& name_token = Next();
  auto it = scope->names.find(std::string(name_token.text));
  if (it == scope->names.end()) {
    return ErrorAt(name_token, absl::StrCat("use of undefined value '%", name_token.text, "'"));
  }
  if (shape.has_value() && !shape->Compatible(it->second->shape())) {
    return ErrorAt(start, absl::StrCat("operand shape ", shape->ToString(),
                                       " does not match the shape ",
                                       it->second->shape().ToString(), " of '%",
                                       name_token.text, "'"));
  }
  return it->second;
}

absl::StatusOr<std::unique_ptr<Instruction>> Parser::ParseOpcodeAndRest(
    Scope* scope, std::optional<Shape> shape, const Token& opcode_token, bool allow_attributes) {
  if (!Is(TokenKind::kIdent)) return Expected("opcode");
  absl::string_view opcode_name = Next().text;
  std::optional<Opcode> opcode = ParseOpcode(opcode_name);
  // The generic async forms `<op>-start`, `<op>-update`, `<op>-done`.
  bool generic_start = false;
  if (!opcode.has_value()) {
    absl::string_view base = opcode_name;
    if (absl::ConsumeSuffix(&base, "-start") && ParseOpcode(base).has_value()) {
      opcode = ParseOpcode(base);
      generic_start = true;
      if (!shape.has_value() || !shape->IsTuple() || shape->tuple_size() < 2 ||
          !shape->tuple_shapes(0).IsTuple()) {
        return ErrorAt(opcode_token,
                       absl::StrCat("unsupported: the generic async form '", opcode_name,
                                    "' needs its shape written as ((operands...), result, ...)"));
      }
    } else if (base = opcode_name; absl::ConsumeSuffix(&base, "-update") &&
                                   ParseOpcode(base).has_value()) {
      opcode = Opcode::kAsyncUpdate;
    } else if (base = opcode_name; absl::ConsumeSuffix(&base, "-done") &&
                                   ParseOpcode(base).has_value()) {
      opcode = Opcode::kAsyncDone;
    } else if (!shape.has_value() && Is(TokenKind::kLSquare)) {
      // `f31[2]`: what stands where a shape would is no element type.
      return ErrorAt(opcode_token, absl::StrCat("unknown element type '", opcode_name, "'"));
    } else {
      return ErrorAt(opcode_token, absl::StrCat("unknown opcode '", opcode_name, "'"));
    }
  }
  const Opcode op = *opcode;
  if (!shape.has_value() && RequiresShape(op)) {
    return ErrorAt(opcode_token, absl::StrCat(opcode_name, " needs its result shape written"));
  }
  auto instruction = std::make_unique<Instruction>(op, shape.has_value() ? *shape : Shape());
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
  std::vector<Instruction*> operands;
  if (op == Opcode::kParameter) {
    const Token& t = Peek();
    XJIT_ASSIGN_OR_RETURN(int64_t number, ParseInt());
    if (number < 0) return ErrorAt(t, "parameter number must be non-negative");
    const Computation* c = scope->computation;
    if (number < c->parameter_count() && c->parameter(number) != nullptr) {
      return ErrorAt(t, absl::StrCat("duplicate parameter number ", number));
    }
    if (number > 100000000) return ErrorAt(t, "parameter number too large");
    instruction->mutable_attrs()->parameter_number = number;
  } else if (op == Opcode::kConstant) {
    if (shape->IsToken() || shape->IsOpaque()) {
      return ErrorAt(opcode_token, "a constant needs an array or tuple shape");
    }
    XJIT_RETURN_IF_ERROR(
        CheckLiteralSize(opcode_token, *shape, absl::StrCat("constant ", instruction_name_)));
    if (!LiteralFitsText(*shape)) {
      return ErrorAt(opcode_token, absl::StrCat("a constant of ", shape->ToString(false),
                                                " has more elements than the rest of the text"));
    }
    Literal literal(*shape);
    XJIT_RETURN_IF_ERROR(ParseLiteralValue(*shape, &literal));
    instruction->set_literal(std::move(literal));
  } else {
    while (!Is(TokenKind::kRParen)) {
      if (!operands.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRParen));
      XJIT_ASSIGN_OR_RETURN(Instruction* operand, ParseOperand(scope));
      operands.push_back(operand);
    }
  }
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
  int arity = OpcodeArity(op);
  if (arity != kVariadic && static_cast<int64_t>(operands.size()) != arity) {
    return ErrorAt(opcode_token, absl::StrCat("wrong number of operands for ", opcode_name,
                                              ": expected ", arity, ", got ", operands.size()));
  }
  // A generic async start gets its operands when it is wrapped.
  if (!generic_start) {
    for (Instruction* operand : operands) instruction->AppendOperand(operand);
  }

  CalledSlots slots;
  absl::flat_hash_set<std::string> seen;
  if (allow_attributes) {
    while (Accept(TokenKind::kComma)) {
      XJIT_RETURN_IF_ERROR(ParseAttribute(scope, instruction.get(), &slots, &seen));
    }
  }
  for (absl::string_view attribute : RequiredAttributes(op)) {
    if (!seen.contains(attribute)) {
      return ErrorAt(opcode_token, absl::StrCat("missing required attribute '", attribute,
                                                "' for ", OpcodeName(op)));
    }
  }
  XJIT_RETURN_IF_ERROR(AssembleCalled(opcode_token, instruction.get(), &slots));
  if (generic_start) return WrapInAsyncStart(std::move(instruction), operands, opcode_token);
  if (!shape.has_value()) {
    absl::StatusOr<Shape> inferred = InferShape(*instruction);
    if (!inferred.ok()) {
      return ErrorAt(opcode_token, absl::StrCat("cannot infer the shape of ", opcode_name, ": ",
                                                inferred.status().message()));
    }
    *instruction->mutable_shape() = *inferred;
  }
  return instruction;
}

absl::StatusOr<std::unique_ptr<Instruction>> Parser::WrapInAsyncStart(
    std::unique_ptr<Instruction> wrapped, const std::vector<Instruction*>& operands,
    const Token& at) {
  const Shape async_shape = wrapped->shape();
  const Shape& operand_shapes = async_shape.tuple_shapes(0);
  if (operand_shapes.tuple_size() != static_cast<int64_t>(operands.size())) {
    return ErrorAt(at, absl::StrCat("the async shape lists ", operand_shapes.tuple_size(),
                                    " operands but there are ", operands.size()));
  }
  auto computation = std::make_unique<Computation>("");
  auto start = std::make_unique<Instruction>(Opcode::kAsyncStart, async_shape);
  auto inner = std::make_unique<Instruction>(wrapped->opcode(), async_shape.tuple_shapes(1));
  inner->set_attrs(wrapped->attrs());
  if (wrapped->has_literal()) inner->set_literal(wrapped->literal());
  inner->set_called_computations(wrapped->called_computations());
  for (const OpaqueAttribute& attribute : wrapped->opaque_attributes()) {
    // The thread belongs to the async pair; everything else to the wrapped op.
    if (attribute.name == "async_execution_thread") {
      start->mutable_opaque_attributes()->push_back(attribute);
    } else {
      inner->mutable_opaque_attributes()->push_back(attribute);
    }
  }
  for (int64_t i = 0; i < static_cast<int64_t>(operands.size()); ++i) {
    auto parameter = std::make_unique<Instruction>(Opcode::kParameter,
                                                   operand_shapes.tuple_shapes(i));
    parameter->set_name(absl::StrCat("param.", i));
    parameter->mutable_attrs()->parameter_number = i;
    inner->AppendOperand(computation->AddInstruction(std::move(parameter)));
  }
  inner->set_name(std::string(OpcodeName(inner->opcode())));
  computation->set_root(computation->AddInstruction(std::move(inner)));
  for (Instruction* operand : operands) start->AppendOperand(operand);
  Computation* raw = module_->AddComputation(std::move(computation));
  inline_computations_.push_back(raw);
  start->set_called_computations({raw});
  return start;
}

absl::Status Parser::AssembleCalled(const Token& at, Instruction* instruction,
                                    CalledSlots* slots) {
  auto take = [&](absl::string_view key) -> std::vector<Computation*> {
    auto it = slots->by_name.find(key);
    return it == slots->by_name.end() ? std::vector<Computation*>() : it->second;
  };
  auto has = [&](absl::string_view key) { return slots->by_name.contains(key); };
  auto missing = [&](absl::string_view what) {
    return ErrorAt(at, absl::StrCat(OpcodeName(instruction->opcode()), " needs ", what));
  };
  std::vector<Computation*> called;
  switch (instruction->opcode()) {
    case Opcode::kWhile:
      if (!has("condition") || !has("body")) return missing("condition= and body=");
      called = {take("condition")[0], take("body")[0]};
      break;
    case Opcode::kSelectAndScatter:
      if (!has("select") || !has("scatter")) return missing("select= and scatter=");
      called = {take("select")[0], take("scatter")[0]};
      break;
    case Opcode::kConditional:
      if (has("true_computation") || has("false_computation")) {
        if (!has("true_computation") || !has("false_computation") || has("branch_computations")) {
          return missing("both true_computation= and false_computation=");
        }
        called = {take("true_computation")[0], take("false_computation")[0]};
      } else {
        if (!has("branch_computations")) return missing("branch_computations=");
        called = take("branch_computations");
      }
      break;
    case Opcode::kFusion:
      if (!has("calls")) return missing("calls=");
      called = take("calls");
      break;
    case Opcode::kAsyncStart:
      if (!has("calls")) return missing("calls=");
      called = take("calls");
      break;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      called = take("calls");
      if (called.empty() && instruction->operand_count() == 1) {
        called = instruction->operand(0)->called_computations();
      }
      break;
    case Opcode::kCustomCall:
      called = take("to_apply");
      for (Computation* c : take("called_computations")) called.push_back(c);
      break;
    default:
      called = take("to_apply");
      break;
  }
  instruction->set_called_computations(std::move(called));
  return absl::OkStatus();
}

absl::Status Parser::ParseAttribute(Scope* scope, Instruction* instruction, CalledSlots* slots,
                                    absl::flat_hash_set<std::string>* seen) {
  if (!Is(TokenKind::kAttrName)) return Expected("attribute name");
  const Token& name = Next();
  std::string key(name.text);
  if (!seen->insert(key).second) {
    return ErrorAt(name, absl::StrCat("duplicate attribute '", key, "'"));
  }
  if (key == "control-predecessors") {
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
    Scope::PendingControl pending{instruction, {}};
    while (!Is(TokenKind::kRBrace)) {
      if (!pending.predecessors.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRBrace));
      if (!IsNameToken()) return Expected("instruction name");
      const Token& t = Next();
      pending.predecessors.push_back({std::string(t.text), &t});
    }
    Next();
    scope->control.push_back(std::move(pending));
    return absl::OkStatus();
  }
  if (IsTypedAttribute(instruction->opcode(), key)) {
    return ParseTypedAttribute(name, instruction, slots);
  }
  if (instruction->opcode() == Opcode::kShuffle && key == "indices") {
    // shuffle's mode=permute table, a shaped literal (`s32[4]{0} {3, 1, 0, 2}`)
    // whose parts are separated by a space, which SkipValue would end at; it
    // stays opaque with its source text (the evaluator parses it).
    const size_t begin = Peek().offset;
    XJIT_RETURN_IF_ERROR(ParseShapedLiteral().status());
    const size_t end = pos_ > 0 ? tokens_[pos_ - 1].end : begin;
    instruction->mutable_opaque_attributes()->push_back(
        {key, std::string(text_.substr(begin, end - begin))});
    return absl::OkStatus();
  }
  XJIT_ASSIGN_OR_RETURN(std::string value, SkipValue());
  instruction->mutable_opaque_attributes()->push_back({key, std::move(value)});
  return absl::OkStatus();
}

template <typename E>
absl::StatusOr<E> ParseEnumText(absl::string_view text,
                                std::initializer_list<std::pair<absl::string_view, E>> table) {
  for (const auto& [name, value] : table) {
    if (absl::EqualsIgnoreCase(name, text)) return value;
  }
  return absl::NotFoundError("");
}

absl::StatusOr<Computation*> Parser::ParseComputationRef() {
  if (Is(TokenKind::kLBrace)) {
    auto computation = std::make_unique<Computation>("");
    Scope scope;
    scope.computation = computation.get();
    XJIT_RETURN_IF_ERROR(ParseComputationBody(&scope));
    Computation* raw = module_->AddComputation(std::move(computation));
    inline_computations_.push_back(raw);
    return raw;
  }
  if (!IsNameToken()) return Expected("computation name");
  const Token& t = Next();
  auto it = computations_.find(std::string(t.text));
  if (it == computations_.end()) {
    return ErrorAt(t, absl::StrCat("unknown computation '%", t.text, "'"));
  }
  return it->second;
}

absl::StatusOr<std::vector<Computation*>> Parser::ParseComputationList() {
  return ParseList<Computation*>(TokenKind::kLBrace, TokenKind::kRBrace,
                                 [this] { return ParseComputationRef(); });
}

namespace {

// Splits "3x3" or "1_1x0_0" at 'x' and parses each part with `part`.
template <typename F>
bool SplitX(absl::string_view text, F part) {
  size_t start = 0;
  while (true) {
    size_t x = text.find('x', start);
    absl::string_view piece =
        text.substr(start, x == absl::string_view::npos ? absl::string_view::npos : x - start);
    if (!part(piece)) return false;
    if (x == absl::string_view::npos) return true;
    start = x + 1;
  }
}

bool ParsePadGroup(absl::string_view piece, PaddingDimension* out) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (true) {
    // '_' separates numbers; a '-' after '_' is a sign.
    size_t u = piece.find('_', start);
    absl::string_view num =
        piece.substr(start, u == absl::string_view::npos ? absl::string_view::npos : u - start);
    int64_t v;
    if (!absl::SimpleAtoi(num, &v)) return false;
    values.push_back(v);
    if (u == absl::string_view::npos) break;
    start = u + 1;
  }
  if (values.size() < 2 || values.size() > 3) return false;
  out->low = values[0];
  out->high = values[1];
  out->interior = values.size() == 3 ? values[2] : 0;
  return true;
}

}  // namespace

absl::StatusOr<Window> Parser::ParseWindow() {
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<PaddingDimension> pad;
  absl::flat_hash_set<std::string> seen;
  while (!Is(TokenKind::kRBrace)) {
    Accept(TokenKind::kComma);
    if (!Is(TokenKind::kAttrName)) return Expected("window field (size=, stride=, pad=, ...)");
    const Token& field = Next();
    if (!seen.insert(std::string(field.text)).second) {
      return ErrorAt(field, absl::StrCat("duplicate window field '", field.text, "'"));
    }
    const Token& value = Peek();
    if (field.text == "pad") {
      if (value.kind != TokenKind::kPad) return Expected("padding (lo_hi)");
      Next();
      bool ok = SplitX(value.text, [&](absl::string_view piece) {
        PaddingDimension d;
        if (!ParsePadGroup(piece, &d) || d.interior != 0) return false;
        pad.push_back(d);
        return true;
      });
      if (!ok) return ErrorAt(value, "invalid window padding");
      continue;
    }
    std::vector<int64_t>* target = nullptr;
    if (field.text == "size") target = &size;
    if (field.text == "stride") target = &stride;
    if (field.text == "lhs_dilate") target = &lhs_dilate;
    if (field.text == "rhs_dilate") target = &rhs_dilate;
    if (field.text == "rhs_reversal") target = &reversal;
    if (target == nullptr) {
      return ErrorAt(field, absl::StrCat("unknown window field '", field.text, "'"));
    }
    if (value.kind != TokenKind::kInt && value.kind != TokenKind::kDxD) {
      return Expected("dimensions (NxM)");
    }
    Next();
    bool ok = SplitX(value.text, [&](absl::string_view piece) {
      int64_t v;
      if (!absl::SimpleAtoi(piece, &v)) return false;
      target->push_back(v);
      return true;
    });
    if (!ok) return ErrorAt(value, "invalid window dimensions");
  }
  const Token& close = Next();
  size_t n = size.size();
  for (size_t other : {stride.size(), lhs_dilate.size(), rhs_dilate.size(), reversal.size(),
                       pad.size()}) {
    if (other != 0 && other != n) {
      return ErrorAt(close, "window fields have different numbers of dimensions");
    }
  }
  Window window(n);
  for (size_t i = 0; i < n; ++i) {
    window[i].size = size[i];
    if (!stride.empty()) window[i].stride = stride[i];
    if (!pad.empty()) {
      window[i].padding_low = pad[i].low;
      window[i].padding_high = pad[i].high;
    }
    if (!lhs_dilate.empty()) window[i].base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) window[i].window_dilation = rhs_dilate[i];
    if (!reversal.empty()) window[i].window_reversal = reversal[i] != 0;
  }
  return window;
}

absl::Status Parser::ParseDimLabels(ConvolutionDimensionNumbers* dnums) {
  const Token& t = Peek();
  if (t.kind != TokenKind::kDimLabels) return Expected("dim labels (like b01f_01io->b01f)");
  Next();
  absl::string_view text = t.text;
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  absl::string_view lhs = text.substr(0, underscore);
  absl::string_view rhs = text.substr(underscore + 1, arrow - underscore - 1);
  absl::string_view out = text.substr(arrow + 2);
  auto spatial_count = [](absl::string_view s) {
    int64_t n = 0;
    for (char c : s) n += (c >= '0' && c <= '9') ? 1 : 0;
    return n;
  };
  int64_t n = spatial_count(lhs);
  if (spatial_count(rhs) != n || spatial_count(out) != n) {
    return ErrorAt(t, "dim labels have different numbers of spatial dimensions");
  }
  // Fills the batch-like and feature-like positions and the spatial list.
  auto decode = [&](absl::string_view s, char a, char b, int64_t* pa, int64_t* pb,
                    std::vector<int64_t>* spatial) -> bool {
    *pa = -1;
    *pb = -1;
    spatial->assign(n, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == a) {
        if (*pa != -1) return false;
        *pa = static_cast<int64_t>(i);
      } else if (c == b) {
        if (*pb != -1) return false;
        *pb = static_cast<int64_t>(i);
      } else if (c >= '0' && c <= '9') {
        int64_t k = c - '0';
        if (k >= n || (*spatial)[k] != -1) return false;
        (*spatial)[k] = static_cast<int64_t>(i);
      } else if (c != '?') {
        return false;
      }
    }
    if (*pa == -1 || *pb == -1) return false;
    for (int64_t v : *spatial) {
      if (v == -1) return false;
    }
    return true;
  };
  if (!decode(lhs, 'b', 'f', &dnums->input_batch_dimension, &dnums->input_feature_dimension,
              &dnums->input_spatial_dimensions) ||
      !decode(rhs, 'i', 'o', &dnums->kernel_input_feature_dimension,
              &dnums->kernel_output_feature_dimension, &dnums->kernel_spatial_dimensions) ||
      !decode(out, 'b', 'f', &dnums->output_batch_dimension, &dnums->output_feature_dimension,
              &dnums->output_spatial_dimensions)) {
    return ErrorAt(t, absl::StrCat("invalid dim labels '", text, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PaddingConfig> Parser::ParsePaddingConfig() {
  const Token& t = Peek();
  PaddingConfig config;
  if (t.kind != TokenKind::kPad) {
    // A rank-0 pad prints an empty config.
    if (t.kind == TokenKind::kComma || t.kind == TokenKind::kEof || t.kind == TokenKind::kRBrace ||
        t.kind == TokenKind::kName || t.kind == TokenKind::kIdent) {
      return config;
    }
    return Expected("padding (lo_hi[_interior]x...)");
  }
  Next();
  bool ok = SplitX(t.text, [&](absl::string_view piece) {
    PaddingDimension d;
    if (!ParsePadGroup(piece, &d)) return false;
    config.push_back(d);
    return true;
  });
  if (!ok) return ErrorAt(t, "invalid padding");
  return config;
}

absl::StatusOr<std::vector<SliceDimension>> Parser::ParseSliceConfig() {
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
  std::vector<SliceDimension> slices;
  while (!Is(TokenKind::kRBrace)) {
    if (!slices.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRBrace));
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLSquare));
    SliceDimension d;
    XJIT_ASSIGN_OR_RETURN(d.start, ParseInt());
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kColon));
    XJIT_ASSIGN_OR_RETURN(d.limit, ParseInt());
    if (Accept(TokenKind::kColon)) {
      XJIT_ASSIGN_OR_RETURN(d.stride, ParseInt());
    }
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRSquare));
    slices.push_back(d);
  }
  Next();
  return slices;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> Parser::ParseReplicaGroups() {
  if (Is(TokenKind::kLBrace)) return ParseIntListList();
  const Token& start = Peek();
  if (!Is(TokenKind::kLSquare)) return Expected("replica groups ('{' or iota '[')");
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> group_dims,
                        ParseIntsBetween(TokenKind::kLSquare, TokenKind::kRSquare));
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLeq));
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> reshape_dims,
                        ParseIntsBetween(TokenKind::kLSquare, TokenKind::kRSquare));
  std::vector<int64_t> perm;
  if (IsIdent("T") && Is(TokenKind::kLParen, 1)) {
    Next();
    XJIT_ASSIGN_OR_RETURN(perm, ParseIntsBetween(TokenKind::kLParen, TokenKind::kRParen));
  } else {
    for (size_t i = 0; i < reshape_dims.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  }
  // Validate: two group dims, products agree, perm is a permutation.
  if (group_dims.size() != 2) return ErrorAt(start, "iota replica groups need two dimensions");
  int64_t total = 1;
  for (int64_t d : reshape_dims) {
    if (d <= 0 || d > (int64_t{1} << 24) || total > (int64_t{1} << 24) / d) {
      return ErrorAt(start, "invalid iota replica group dimensions");
    }
    total *= d;
  }
  if (group_dims[0] < 0 || group_dims[1] <= 0 || group_dims[0] * group_dims[1] != total) {
    return ErrorAt(start, "iota replica group sizes do not match the device count");
  }
  if (perm.size() != reshape_dims.size()) return ErrorAt(start, "invalid iota transpose");
  std::vector<bool> used(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || used[p]) {
      return ErrorAt(start, "invalid iota transpose");
    }
    used[p] = true;
  }
  // Element j of the transposed array (row-major) holds the row-major index
  // in reshape_dims of the source position.
  std::vector<int64_t> transposed(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) transposed[i] = reshape_dims[perm[i]];
  std::vector<std::vector<int64_t>> groups(group_dims[0]);
  std::vector<int64_t> index(perm.size(), 0);
  for (int64_t j = 0; j < total; ++j) {
    std::vector<int64_t> source(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) source[perm[i]] = index[i];
    int64_t value = 0;
    for (size_t i = 0; i < source.size(); ++i) value = value * reshape_dims[i] + source[i];
    groups[j / group_dims[1]].push_back(value);
    for (int64_t i = static_cast<int64_t>(index.size()) - 1; i >= 0; --i) {
      if (++index[i] < transposed[i]) break;
      index[i] = 0;
    }
  }
  return groups;
}

absl::Status Parser::ParseAliasHead(ShapeIndex* output_index, int64_t* number,
                                    ShapeIndex* index) {
  XJIT_ASSIGN_OR_RETURN(*output_index, ParseShapeIndex());
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kColon));
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLParen));
  XJIT_ASSIGN_OR_RETURN(*number, ParseInt());
  XJIT_RETURN_IF_ERROR(Expect(TokenKind::kComma));
  XJIT_ASSIGN_OR_RETURN(*index, ParseShapeIndex());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OutputOperandAlias>> Parser::ParseOutputOperandAliasing() {
  return ParseList<OutputOperandAlias>(
      TokenKind::kLBrace, TokenKind::kRBrace, [this]() -> absl::StatusOr<OutputOperandAlias> {
        OutputOperandAlias alias;
        XJIT_RETURN_IF_ERROR(
            ParseAliasHead(&alias.output_index, &alias.operand_number, &alias.operand_index));
        XJIT_RETURN_IF_ERROR(Expect(TokenKind::kRParen));
        return alias;
      });
}

absl::Status Parser::ParseTypedAttribute(const Token& name, Instruction* instruction,
                                         CalledSlots* slots) {
  InstructionAttributes& a = *instruction->mutable_attrs();
  const Opcode op = instruction->opcode();
  absl::string_view key = name.text;
  const Token& value_token = Peek();
  // Reads an enum spelled as an identifier.
  auto parse_enum = [&](auto table, auto* out) -> absl::Status {
    if (!Is(TokenKind::kIdent)) return Expected(absl::StrCat("value for ", key));
    auto v = ParseEnumText(Peek().text, table);
    if (!v.ok()) {
      return ErrorAt(value_token,
                     absl::StrCat("unknown value '", Peek().text, "' for ", key));
    }
    Next();
    *out = *v;
    return absl::OkStatus();
  };
  auto int_list = [&](std::vector<int64_t>* out) -> absl::Status {
    XJIT_ASSIGN_OR_RETURN(*out, ParseIntList());
    return absl::OkStatus();
  };
  auto int_value = [&](int64_t* out) -> absl::Status {
    XJIT_ASSIGN_OR_RETURN(*out, ParseInt());
    return absl::OkStatus();
  };
  auto bool_value = [&](bool* out) -> absl::Status {
    XJIT_ASSIGN_OR_RETURN(*out, ParseBool());
    return absl::OkStatus();
  };
  auto string_value = [&](std::string* out) -> absl::Status {
    XJIT_ASSIGN_OR_RETURN(*out, ParseString());
    return absl::OkStatus();
  };
  using P = std::pair<absl::string_view, ComparisonDirection>;

  if (key == "direction") {
    return parse_enum(std::initializer_list<P>{{"EQ", ComparisonDirection::kEq},
                                               {"NE", ComparisonDirection::kNe},
                                               {"GE", ComparisonDirection::kGe},
                                               {"GT", ComparisonDirection::kGt},
                                               {"LE", ComparisonDirection::kLe},
                                               {"LT", ComparisonDirection::kLt}},
                      &a.comparison_direction);
  }
  if (key == "type") {
    using T = std::pair<absl::string_view, ComparisonType>;
    return parse_enum(std::initializer_list<T>{{"FLOAT", ComparisonType::kFloat},
                                               {"TOTALORDER", ComparisonType::kTotalOrder},
                                               {"SIGNED", ComparisonType::kSigned},
                                               {"UNSIGNED", ComparisonType::kUnsigned}},
                      &a.comparison_type);
  }
  if (key == "iota_dimension") return int_value(&a.iota_dimension);
  if (key == "dimensions") {
    a.has_dimensions = true;
    return int_list(&a.dimensions);
  }
  if (key == "inferred_dimension") {
    int64_t v;
    XJIT_RETURN_IF_ERROR(int_value(&v));
    a.inferred_dimension = v;
    return absl::OkStatus();
  }
  if (key == "slice") {
    XJIT_ASSIGN_OR_RETURN(a.slice, ParseSliceConfig());
    return absl::OkStatus();
  }
  if (key == "dynamic_slice_sizes" || key == "slice_sizes") return int_list(&a.slice_sizes);
  if (key == "padding") {
    XJIT_ASSIGN_OR_RETURN(a.padding, ParsePaddingConfig());
    return absl::OkStatus();
  }
  if (key == "lhs_batch_dims") return int_list(&a.dot_dimension_numbers.lhs_batch_dimensions);
  if (key == "rhs_batch_dims") return int_list(&a.dot_dimension_numbers.rhs_batch_dimensions);
  if (key == "lhs_contracting_dims") {
    return int_list(&a.dot_dimension_numbers.lhs_contracting_dimensions);
  }
  if (key == "rhs_contracting_dims") {
    return int_list(&a.dot_dimension_numbers.rhs_contracting_dimensions);
  }
  if (key == "operand_precision") {
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
    a.operand_precision.clear();
    while (!Is(TokenKind::kRBrace)) {
      if (!a.operand_precision.empty()) XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRBrace));
      using Q = std::pair<absl::string_view, Precision>;
      Precision p = Precision::kDefault;
      XJIT_RETURN_IF_ERROR(parse_enum(std::initializer_list<Q>{{"default", Precision::kDefault},
                                                               {"high", Precision::kHigh},
                                                               {"highest", Precision::kHighest}},
                                      &p));
      a.operand_precision.push_back(p);
    }
    Next();
    return absl::OkStatus();
  }
  if (key == "algorithm") {
    if (op == Opcode::kRngBitGenerator) {
      using R = std::pair<absl::string_view, RandomAlgorithm>;
      return parse_enum(std::initializer_list<R>{{"rng_default", RandomAlgorithm::kDefault},
                                                 {"rng_three_fry", RandomAlgorithm::kThreeFry},
                                                 {"rng_philox", RandomAlgorithm::kPhilox}},
                        &a.rng_algorithm);
    }
    XJIT_ASSIGN_OR_RETURN(a.algorithm, ParseIdentText("dot algorithm"));
    return absl::OkStatus();
  }
  if (key == "window") {
    XJIT_ASSIGN_OR_RETURN(a.window, ParseWindow());
    a.has_window = true;
    return absl::OkStatus();
  }
  if (key == "dim_labels") return ParseDimLabels(&a.convolution_dimension_numbers);
  if (key == "feature_group_count") return int_value(&a.feature_group_count);
  if (key == "batch_group_count") return int_value(&a.batch_group_count);
  // Gather / scatter dimension numbers.
  GatherDimensionNumbers& g = a.gather_dimension_numbers;
  ScatterDimensionNumbers& s = a.scatter_dimension_numbers;
  if (key == "offset_dims") return int_list(&g.offset_dims);
  if (key == "collapsed_slice_dims") return int_list(&g.collapsed_slice_dims);
  if (key == "start_index_map") return int_list(&g.start_index_map);
  if (key == "operand_batching_dims") return int_list(&g.operand_batching_dims);
  if (key == "start_indices_batching_dims") return int_list(&g.start_indices_batching_dims);
  if (key == "index_vector_dim") {
    return int_value(op == Opcode::kGather ? &g.index_vector_dim : &s.index_vector_dim);
  }
  if (key == "update_window_dims") return int_list(&s.update_window_dims);
  if (key == "inserted_window_dims") return int_list(&s.inserted_window_dims);
  if (key == "scatter_dims_to_operand_dims") return int_list(&s.scatter_dims_to_operand_dims);
  if (key == "input_batching_dims") return int_list(&s.input_batching_dims);
  if (key == "scatter_indices_batching_dims") return int_list(&s.scatter_indices_batching_dims);
  if (key == "indices_are_sorted") return bool_value(&a.indices_are_sorted);
  if (key == "unique_indices") return bool_value(&a.unique_indices);
  if (key == "is_stable") return bool_value(&a.is_stable);
  if (key == "k") return int_value(&a.k);
  if (key == "largest") return bool_value(&a.largest);
  if (key == "to_apply" || key == "calls" || key == "condition" || key == "body" ||
      key == "select" || key == "scatter" || key == "true_computation" ||
      key == "false_computation") {
    XJIT_ASSIGN_OR_RETURN(Computation* c, ParseComputationRef());
    slots->by_name[key] = {c};
    return absl::OkStatus();
  }
  if (key == "branch_computations" || key == "called_computations") {
    XJIT_ASSIGN_OR_RETURN(slots->by_name[key], ParseComputationList());
    return absl::OkStatus();
  }
  if (key == "is_composite") return bool_value(&a.is_composite);
  if (key == "kind") {
    using K = std::pair<absl::string_view, FusionKind>;
    return parse_enum(std::initializer_list<K>{{"kLoop", FusionKind::kLoop},
                                               {"kInput", FusionKind::kInput},
                                               {"kOutput", FusionKind::kOutput},
                                               {"kCustom", FusionKind::kCustom}},
                      &a.fusion_kind);
  }
  if (key == "output_to_operand_aliasing") {
    XJIT_ASSIGN_OR_RETURN(a.output_to_operand_aliasing, ParseOutputOperandAliasing());
    return absl::OkStatus();
  }
  if (key == "custom_call_target") return string_value(&a.custom_call_target);
  if (key == "api_version") {
    XJIT_ASSIGN_OR_RETURN(a.api_version, ParseIdentText("API version"));
    return absl::OkStatus();
  }
  if (key == "custom_call_has_side_effect") return bool_value(&a.custom_call_has_side_effect);
  if (key == "operand_layout_constraints") {
    XJIT_RETURN_IF_ERROR(Expect(TokenKind::kLBrace));
    a.operand_layout_constraints.clear();
    while (!Is(TokenKind::kRBrace)) {
      if (!a.operand_layout_constraints.empty()) {
        XJIT_RETURN_IF_ERROR(ExpectListComma(TokenKind::kRBrace));
      }
      XJIT_ASSIGN_OR_RETURN(Shape shape, ParseShape());
      a.operand_layout_constraints.push_back(std::move(shape));
    }
    Next();
    a.has_operand_layout_constraints = true;
    return absl::OkStatus();
  }
  if (key == "backend_config") {
    XJIT_ASSIGN_OR_RETURN(a.backend_config, SkipValue());
    return absl::OkStatus();
  }
  if (key == "literal") {
    XJIT_ASSIGN_OR_RETURN(Literal literal, ParseShapedLiteral());
    instruction->set_literal(std::move(literal));
    return absl::OkStatus();
  }
  if (key == "fft_type") {
    using F = std::pair<absl::string_view, FftType>;
    return parse_enum(std::initializer_list<F>{{"FFT", FftType::kFft},
                                               {"IFFT", FftType::kIfft},
                                               {"RFFT", FftType::kRfft},
                                               {"IRFFT", FftType::kIrfft}},
                      &a.fft_type);
  }
  if (key == "fft_length") return int_list(&a.fft_length);
  if (key == "left_side") return bool_value(&a.left_side);
  if (key == "lower") return bool_value(&a.lower);
  if (key == "unit_diagonal") return bool_value(&a.unit_diagonal);
  if (key == "transpose_a") {
    using T = std::pair<absl::string_view, TriangularSolveTranspose>;
    return parse_enum(
        std::initializer_list<T>{{"NO_TRANSPOSE", TriangularSolveTranspose::kNoTranspose},
                                 {"TRANSPOSE", TriangularSolveTranspose::kTranspose},
                                 {"ADJOINT", TriangularSolveTranspose::kAdjoint}},
        &a.transpose_a);
  }
  if (key == "exponent_bits") return int_value(&a.exponent_bits);
  if (key == "mantissa_bits") return int_value(&a.mantissa_bits);
  if (key == "epsilon") {
    XJIT_ASSIGN_OR_RETURN(a.epsilon, ParseDouble());
    return absl::OkStatus();
  }
  if (key == "feature_index") return int_value(&a.feature_index);
  if (key == "distribution") {
    using D = std::pair<absl::string_view, RandomDistribution>;
    return parse_enum(std::initializer_list<D>{{"rng_uniform", RandomDistribution::kUniform},
                                               {"rng_normal", RandomDistribution::kNormal}},
                      &a.distribution);
  }
  if (key == "delta") return int_value(&a.delta);
  if (key == "index") return int_value(&a.tuple_index);
  if (key == "infeed_config") return string_value(&a.infeed_config);
  if (key == "outfeed_config") return string_value(&a.outfeed_config);
  if (key == "outfeed_shape") {
    XJIT_ASSIGN_OR_RETURN(Shape shape, ParseShape());
    a.outfeed_shape = std::move(shape);
    return absl::OkStatus();
  }
  if (key == "channel_id") {
    int64_t v;
    XJIT_RETURN_IF_ERROR(int_value(&v));
    a.channel_id = v;
    return absl::OkStatus();
  }
  if (key == "is_host_transfer") return bool_value(&a.is_host_transfer);
  if (key == "use_global_device_ids") return bool_value(&a.use_global_device_ids);
  if (key == "constrain_layout") return bool_value(&a.constrain_layout);
  if (key == "replica_groups") {
    XJIT_ASSIGN_OR_RETURN(a.replica_groups, ParseReplicaGroups());
    a.has_replica_groups = true;
    return absl::OkStatus();
  }
  if (key == "source_target_pairs") {
    XJIT_ASSIGN_OR_RETURN(auto pairs, ParseIntListList());
    a.source_target_pairs.clear();
    for (const auto& pair : pairs) {
      if (pair.size() != 2) return ErrorAt(value_token, "a source-target pair has two elements");
      a.source_target_pairs.push_back({pair[0], pair[1]});
    }
    return absl::OkStatus();
  }
  return ErrorAt(name, absl::StrCat("internal: no parser for attribute '", key, "'"));
}

// ===================================================================
// Single shapes and literals

absl::StatusOr<Shape> Parser::ParseShapeOnly() {
  XJIT_ASSIGN_OR_RETURN(Shape shape, ParseShape());
  if (!Is(TokenKind::kEof)) return Expected("end of input");
  return shape;
}

absl::StatusOr<Literal> Parser::ParseLiteralOnly() {
  XJIT_ASSIGN_OR_RETURN(Literal literal, ParseShapedLiteral());
  if (!Is(TokenKind::kEof)) return Expected("end of input");
  return literal;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(absl::string_view text,
                                                        absl::string_view filename) {
  return ParseHloModule(text, filename, ParseOptions());
}

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(absl::string_view text,
                                                        absl::string_view filename,
                                                        const ParseOptions& options) {
  Parser parser(text, filename, options);
  return parser.ParseModule();
}

absl::StatusOr<Shape> ParseShape(absl::string_view text) {
  Parser parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

absl::StatusOr<Literal> ParseLiteral(absl::string_view text) {
  Parser parser(text, "<literal>");
  return parser.ParseLiteralOnly();
}

}  // namespace xjit
