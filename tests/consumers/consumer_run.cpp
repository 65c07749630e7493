// An installed hookforge::run in a project of its own: a hook registered here, then the
// command line with --check on the embedded default (builds every component, trains nothing).
#include <hookforge/run.hpp>

struct ConsumerHook {
  void note(hookforge::TrainerContext&) {}
  static constexpr auto bindings =
      hookforge::bindings(HOOKFORGE_HOOKS_INTO(note, hookforge::points::on_training_finished));
};
HOOKFORGE_REGISTER(trainer_hook, ConsumerHook);

int main() {
  char name[] = "consumer", check[] = "--check", set[] = "--set",
       hooks[] = "trainer.params.hooks=[{_target: ConsumerHook}]";
  char* argv[] = {name, check, set, hooks, nullptr};
  return hookforge::run::main(4, argv);
}
