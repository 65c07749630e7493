// The test domain's registrations: each one line, in a translation unit of its own (the
// tests reach them only through the registries).
#include "fixtures.hpp"

namespace cfg = hookforge::config;
using namespace cfg_fixtures;

HOOKFORGE_REGISTER_AS(test_component, "TrainRunner", TrainComponent,
                      cfg::arg<cfg::hook_list<train_runner>>("hooks", {}),
                      cfg::arg<int>("steps", 1));
HOOKFORGE_REGISTER_AS(test_component, "GraphedTrainRunner", GraphedTrainComponent,
                      cfg::arg<cfg::hook_list<graphed_train_runner>>("hooks", {}),
                      cfg::arg<int>("steps", 1));
HOOKFORGE_REGISTER_AS(test_component, "ValRunner", ValComponent,
                      cfg::arg<cfg::hook_list<val_runner>>("hooks", {}), cfg::arg<int>("steps", 1));

HOOKFORGE_REGISTER(shape, Square, cfg::arg<double>("side"));
HOOKFORGE_REGISTER(shape, Scaled, cfg::arg<std::shared_ptr<Shape>>("inner"),
                   cfg::arg<double>("factor", 1.0));
HOOKFORGE_REGISTER(shape, Group, cfg::arg<std::vector<std::shared_ptr<Shape>>>("parts"));
HOOKFORGE_REGISTER_AS(shape, "Tile", Square,
                      cfg::factory([](double diagonal) { return Square(diagonal / 2); }),
                      cfg::arg<double>("half_of"));

HOOKFORGE_REGISTER(test_hook, Counter, cfg::arg<int>("start", 0),
                   cfg::arg<std::string>("label", "c"));
HOOKFORGE_REGISTER(test_hook, RankZeroCounter, cfg::arg<int>("start", 0),
                   cfg::arg<std::string>("label", "z"));
HOOKFORGE_RANK_ZERO_ONLY(RankZeroCounter);
HOOKFORGE_REGISTER(test_hook, TwoHandlers);
HOOKFORGE_REGISTER(test_hook, TrainOnly);
HOOKFORGE_REGISTER(test_hook, AfterBackward);
HOOKFORGE_REGISTER(test_hook, Stateful);
HOOKFORGE_REGISTER(train_hook, TrainCtxOnly);
HOOKFORGE_REGISTER(
    test_hook, Clip,
    cfg::options<clip_options>(cfg::field("max_norm", &clip_options::max_norm, cfg::required),
                               cfg::field("norm_type", &clip_options::norm_type),
                               cfg::field("groups", &clip_options::groups),
                               cfg::field("cap", &clip_options::cap),
                               cfg::field("enabled", &clip_options::enabled),
                               cfg::field("watch", &clip_options::watch).naming("a test score"),
                               cfg::field("limit", &clip_options::limit).allowing_infinity(),
                               cfg::field("out", &clip_options::out).output_path()));
HOOKFORGE_REGISTER(test_hook, Writer, cfg::arg<std::filesystem::path>("dir", "logs").output_path());
HOOKFORGE_REGISTER(test_hook, Recorder, cfg::arg<std::int64_t>("big", 0),
                   cfg::arg<std::uint8_t>("small", 0), cfg::arg<float>("ratio", 1.0f),
                   cfg::arg<bool>("flag", false), cfg::arg<std::vector<int>>("sizes", {}),
                   cfg::arg<std::map<std::string, double>>("weights", {}),
                   cfg::arg<std::optional<int>>("maybe"));

// A parameter type of the user's, whose value_traits come after register.hpp (fixtures.hpp
// includes it): a parameter table still shows its default through value_traits<T>::show.
namespace cfg_fixtures {
enum class tint { red, blue };
struct Tinted : Shape {
  tint colour;
  std::vector<tint> palette;
  Tinted(tint c, std::vector<tint> p) : colour(c), palette(std::move(p)) {}
  double area() const override { return colour == tint::red ? 1 : 2; }
};
}  // namespace cfg_fixtures

template <>
struct hookforge::config::value_traits<cfg_fixtures::tint> {
  static std::string expected() { return "red or blue"; }
  template <class B>
  static cfg_fixtures::tint read(B&, const value& v) {
    if (v.is_scalar() && v.scalar() == "red") return cfg_fixtures::tint::red;
    if (v.is_scalar() && v.scalar() == "blue") return cfg_fixtures::tint::blue;
    throw config_error(v.where(), v.key(), expected(), v.describe());
  }
  static std::string show(cfg_fixtures::tint t) {
    return t == cfg_fixtures::tint::red ? "red" : "blue";
  }
};

HOOKFORGE_REGISTER(shape, Tinted, cfg::arg<tint>("colour", tint::blue),
                   cfg::arg<std::vector<tint>>("palette", {tint::red, tint::blue}));
