// Module: the computations of a program, one of which is the entry, plus the
// module-level attributes of HLO text.
#ifndef XJIT_IR_MODULE_H_
#define XJIT_IR_MODULE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "absl/strings/string_view.h"
#include "ir/instruction.h"
#include "ir/name_index.h"

namespace xjit {

// `input_output_alias={ {0}: (1, {}, may-alias) }`.
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  std::string kind;  // "", "may-alias" or "must-alias"
  bool operator==(const InputOutputAlias&) const = default;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Computations in definition order: callees before callers.
  Computation* AddComputation(std::unique_ptr<Computation> computation);
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  // The computation named `name`, or null (the first in definition order if
  // several share it). Constant time, through an index of their names.
  Computation* FindComputation(absl::string_view name) const;
  // `base` if no computation has that name, otherwise `base.N` with the
  // smallest free N (as Computation::FreeInstructionName). Amortised
  // constant time.
  std::string FreeComputationName(absl::string_view base) const {
    return computation_names_.Free(base);
  }
  // Removes a computation no instruction calls.
  void RemoveComputation(Computation* computation);

  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }

  // `entry_computation_layout={(params...)->result}` if written.
  const std::optional<std::vector<Shape>>& entry_parameter_layouts() const {
    return entry_parameter_layouts_;
  }
  const std::optional<Shape>& entry_result_layout() const { return entry_result_layout_; }
  void set_entry_computation_layout(std::vector<Shape> parameters, Shape result) {
    entry_parameter_layouts_ = std::move(parameters);
    entry_result_layout_ = std::move(result);
  }

  int64_t replica_count() const { return replica_count_; }
  void set_replica_count(int64_t n) { replica_count_ = n; }
  int64_t num_partitions() const { return num_partitions_; }
  void set_num_partitions(int64_t n) { num_partitions_ = n; }
  bool is_scheduled() const { return is_scheduled_; }
  void set_is_scheduled(bool scheduled) { is_scheduled_ = scheduled; }

  const std::vector<InputOutputAlias>& input_output_aliases() const { return input_output_aliases_; }
  std::vector<InputOutputAlias>* mutable_input_output_aliases() { return &input_output_aliases_; }

  // Module attributes kept verbatim (frontend_attributes=, buffer_donor=, ...).
  const std::vector<OpaqueAttribute>& opaque_attributes() const { return opaque_attributes_; }
  std::vector<OpaqueAttribute>* mutable_opaque_attributes() { return &opaque_attributes_; }

  // A deep copy (same names; computations and instructions duplicated).
  std::unique_ptr<Module> Clone() const;

 private:
  friend class Computation;  // Computation::set_name keeps the index in step.

  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  NameIndex<Computation> computation_names_;
  Computation* entry_ = nullptr;
  std::optional<std::vector<Shape>> entry_parameter_layouts_;
  std::optional<Shape> entry_result_layout_;
  int64_t replica_count_ = 1;
  int64_t num_partitions_ = 1;
  bool is_scheduled_ = false;
  std::vector<InputOutputAlias> input_output_aliases_;
  std::vector<OpaqueAttribute> opaque_attributes_;
};

}  // namespace xjit

#endif  // XJIT_IR_MODULE_H_
