// Running modules from Python: NumPy arrays in, the entry's array leaves out as NumPy arrays.
// bf16 travels as float32 on the Python side (rounded to nearest even on the way in); the f8
// types travel as their raw uint8 bits.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/primitive_type.h"
#include "runtime/core/executor.h"
#include "runtime/core/value.h"
#include "python/src/bindings.h"

namespace hlox::py {

namespace {

// The NumPy dtype name holding `t`'s elements in Python.
std::string NumpyDtype(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return "bool";
    case PrimitiveType::kS2: case PrimitiveType::kS4: case PrimitiveType::kS8: return "int8";
    case PrimitiveType::kS16: return "int16";
    case PrimitiveType::kS32: return "int32";
    case PrimitiveType::kS64: return "int64";
    case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8: return "uint8";
    case PrimitiveType::kU16: return "uint16";
    case PrimitiveType::kU32: return "uint32";
    case PrimitiveType::kU64: return "uint64";
    case PrimitiveType::kF16: return "float16";
    case PrimitiveType::kBF16: case PrimitiveType::kF32: return "float32";
    case PrimitiveType::kF64: return "float64";
    case PrimitiveType::kC64: return "complex64";
    case PrimitiveType::kC128: return "complex128";
    default: return IsArrayType(t) ? "uint8" : "";  // f8 variants: raw bits
  }
}

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

pyb::array ToNumpy(const rt::Buffer& buf) {
  const Shape& shape = buf.shape();
  pyb::dtype dtype(NumpyDtype(shape.element_type()));
  pyb::tuple dims(shape.rank());  // via numpy.empty: 0-d arrays keep their rank
  for (int64_t i = 0; i < shape.rank(); ++i) dims[i] = pyb::int_(shape.dim(i));
  pyb::array out = pyb::module_::import("numpy").attr("empty")(dims, dtype);
  if (shape.element_type() == PrimitiveType::kBF16) {
    float* dst = static_cast<float*>(out.mutable_data());
    const uint16_t* src = buf.as<uint16_t>();
    for (int64_t i = 0; i < buf.element_count(); ++i) {
      uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
      std::memcpy(&dst[i], &bits, 4);
    }
  } else if (buf.byte_size() > 0) {
    std::memcpy(out.mutable_data(), buf.data(), static_cast<size_t>(out.nbytes()));
  }
  return out;
}

// Converts `obj` to a runtime value of `shape`; tuples take a list/tuple of elements.
rt::Value FromPython(const pyb::handle& obj, const Shape& shape, const std::string& what) {
  if (shape.IsTuple()) {
    auto seq = pyb::reinterpret_borrow<pyb::sequence>(obj);
    if (static_cast<int64_t>(seq.size()) != shape.tuple_size())
      throw pyb::value_error(what + ": expected a tuple of " + std::to_string(shape.tuple_size()));
    std::vector<rt::Value> elems;
    for (int64_t i = 0; i < shape.tuple_size(); ++i)
      elems.push_back(FromPython(seq[i], shape.tuple_shape(i), what + "[" + std::to_string(i) + "]"));
    return rt::Value::Tuple(std::move(elems));
  }
  if (!shape.IsArray()) return rt::Value::Token();
  pyb::module_ np = pyb::module_::import("numpy");
  // asarray(order="C") and not ascontiguousarray, which turns 0-d arrays into 1-d ones.
  pyb::array arr = np.attr("asarray")(obj, NumpyDtype(shape.element_type()), pyb::arg("order") = "C");
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  if (dims != shape.dims()) {
    std::string want, got;
    for (int64_t d : shape.dims()) want += std::to_string(d) + ",";
    for (int64_t d : dims) got += std::to_string(d) + ",";
    throw pyb::value_error(what + ": shape [" + got + "] does not match [" + want + "]");
  }
  auto buf = std::make_shared<rt::Buffer>(shape);
  if (shape.element_type() == PrimitiveType::kBF16) {
    const float* src = static_cast<const float*>(arr.data());
    for (int64_t i = 0; i < buf->element_count(); ++i) buf->as<uint16_t>()[i] = FloatToBf16(src[i]);
  } else if (buf->byte_size() > 0) {
    std::memcpy(buf->data(), arr.data(), static_cast<size_t>(arr.nbytes()));
  }
  return rt::Value::Array(std::move(buf));
}

pyb::list LeavesToList(const rt::Value& value) {
  std::vector<rt::BufferPtr> leaves;
  value.Flatten(&leaves);
  pyb::list out;
  for (const auto& b : leaves) out.append(ToNumpy(*b));
  return out;
}

// Runs the entry computation on NumPy inputs; returns the array leaves of the result.
pyb::list Run(const ModulePtr& module, const pyb::sequence& inputs, int threads, uint64_t seed) {
  const Computation* entry = module->entry();
  if (!entry) throw pyb::value_error("module has no entry computation");
  if (static_cast<int64_t>(inputs.size()) != entry->parameter_count())
    throw pyb::value_error("expected " + std::to_string(entry->parameter_count()) + " inputs, got " +
                           std::to_string(inputs.size()));
  std::vector<rt::Value> args;
  for (int64_t i = 0; i < entry->parameter_count(); ++i)
    args.push_back(FromPython(inputs[i], entry->parameter(i)->shape(), "input " + std::to_string(i)));
  absl::StatusOr<rt::Value> out;
  {
    pyb::gil_scoped_release release;
    rt::ExecOptions options;
    options.threads = threads;
    options.seed = seed;
    auto exec = rt::Executor::Create(*module, options);
    out = exec.ok() ? (*exec)->Run(args) : absl::StatusOr<rt::Value>(exec.status());
  }
  return LeavesToList(Unwrap(std::move(out)));
}

pyb::list SeededInputs(const ModulePtr& module, uint64_t seed) {
  pyb::list out;
  for (const rt::Value& v : rt::MakeSeededInputs(*module, seed)) {
    if (v.is_tuple) {
      out.append(pyb::tuple(LeavesToList(v)));
    } else if (v.is_array()) {
      out.append(ToNumpy(*v.array));
    } else {
      out.append(pyb::none());
    }
  }
  return out;
}

}  // namespace

void BindRuntime(pyb::module_& m) {
  m.def("run", &Run, pyb::arg("module"), pyb::arg("inputs"), pyb::arg("threads") = 1,
        pyb::arg("seed") = 0,
        "Runs the entry on NumPy inputs (one per parameter); returns the output leaves as arrays.");
  m.def("seeded_inputs", &SeededInputs, pyb::arg("module"), pyb::arg("seed") = 0,
        "The seeded inputs every worker uses for validation (bf16 as float32).");
}

}  // namespace hlox::py
