// Describes a C type's ABI as a short string, the same notation that
// gen_abi_expectations.py writes for the reference (bindings.rs) types:
//   u4 / i8 / f8     integer (unsigned/signed) or float of that many bytes
//                    (an enum is its underlying integer type)
//   p->X             pointer to X; "void" and "opaque" (incomplete struct)
//   S40              struct or union of that size
//   [16]i1           array of 16 of that element
//   u4(p->opaque,u4) function: return(parameters)
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

namespace gd_abi {

template <typename T, typename = void>
struct is_complete : std::false_type {};
template <typename T>
struct is_complete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

template <typename T>
std::string describe();

template <typename T>
std::string describe_pointee() {
  using P = std::remove_cv_t<T>;
  if constexpr (std::is_void_v<P>) {
    return "void";
  } else if constexpr (std::is_class_v<P> || std::is_union_v<P>) {
    if constexpr (is_complete<P>::value) {
      return "S" + std::to_string(sizeof(P));
    } else {
      return "opaque";
    }
  } else {
    return describe<P>();
  }
}

template <typename T>
std::string describe() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_pointer_v<U>) {
    return "p->" + describe_pointee<std::remove_pointer_t<U>>();
  } else if constexpr (std::is_array_v<U>) {
    return "[" + std::to_string(std::extent_v<U>) + "]" +
           describe<std::remove_extent_t<U>>();
  } else if constexpr (std::is_enum_v<U>) {
    return describe<std::underlying_type_t<U>>();
  } else if constexpr (std::is_floating_point_v<U>) {
    return "f" + std::to_string(sizeof(U));
  } else if constexpr (std::is_integral_v<U>) {
    return (std::is_signed_v<U> ? "i" : "u") + std::to_string(sizeof(U));
  } else if constexpr (std::is_class_v<U> || std::is_union_v<U>) {
    return "S" + std::to_string(sizeof(U));
  } else {
    return "?";
  }
}

template <typename F>
struct Signature;
template <typename R, typename... A>
struct Signature<R (*)(A...)> {
  static std::string get() {
    std::string s = describe<R>() + "(";
    bool first = true;
    ((s += (first ? "" : ","), s += describe<A>(), first = false), ...);
    return s + ")";
  }
};

template <typename F>
std::string describe_function() {
  return Signature<F>::get();
}

// What the project's header says about one struct field.
struct FieldFacts {
  bool present = false;
  size_t offset = 0;
  std::string type;
};

}  // namespace gd_abi

// FieldFacts of T::f, or {present=false} when T has no member f (so a
// renamed field fails a test rather than the build).
#define GD_ABI_FIELD(T, f)                                           \
  ([]<typename U>() {                                                \
    if constexpr (requires { &U::f; }) {                             \
      return gd_abi::FieldFacts{true, offsetof(U, f),                \
                                gd_abi::describe<decltype(U::f)>()}; \
    } else {                                                         \
      return gd_abi::FieldFacts{};                                   \
    }                                                                \
  }.template operator()<T>())
