// Enumerated configuration values: a key whose value is one of a fixed set of words is held in TrainConfig as
// a C++ enum and parsed once, where the key enters (TOML or --set), so nothing past parsing compares strings.
//
// An enum E joins by specialising EnumNames<E> with its words in enumerator order; the registry binds a
// member with ConfigField's enum constructor (sim/config_fields.h), which takes the allowed words from here,
// so the documentation, the parser's error message and the resolved-config writer agree by construction.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace asyncdp::sim {

// Specialise: `static constexpr std::array<std::string_view, N> kNames{...}`, index = the enumerator's value.
template <typename E>
struct EnumNames;

// An enum that has named its words (so these templates never compete with another enum's own ToString).
template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires {
  EnumNames<E>::kNames;
};

template <NamedEnum E>
std::string_view ToString(E value) {
  return EnumNames<E>::kNames[static_cast<size_t>(value)];
}

template <NamedEnum E>
std::optional<E> EnumFromString(std::string_view text) {
  const auto& names = EnumNames<E>::kNames;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

// A reference to an enum member, its type erased for the registry's variant.
class EnumBinding {
 public:
  template <NamedEnum E>
  explicit EnumBinding(E* member)
      : member_(member),
        get_([](const void* m) { return ToString(*static_cast<const E*>(m)); }),
        set_([](void* m, std::string_view text) {
          const std::optional<E> value = EnumFromString<E>(text);
          if (value) *static_cast<E*>(m) = *value;
          return value.has_value();
        }),
        names_([] {
          std::vector<std::string> names;
          for (std::string_view name : EnumNames<E>::kNames) names.emplace_back(name);
          return names;
        }) {}

  std::string Get() const { return std::string(get_(member_)); }
  // Sets the member from one of Names(); false (member unchanged) for any other text.
  bool Set(std::string_view text) const { return set_(member_, text); }
  std::vector<std::string> Names() const { return names_(); }

 private:
  void* member_;
  std::string_view (*get_)(const void*);
  bool (*set_)(void*, std::string_view);
  std::vector<std::string> (*names_)();
};

}  // namespace asyncdp::sim
