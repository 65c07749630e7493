// A project using the installed config layer: parse a config, override it, read a value.
#include <cstdio>

#include <hookforge/config.hpp>

int main() {
  auto doc = hookforge::config::document::parse("train: {params: {steps: 1}}\n", "consumer.yaml");
  doc.set("train.params.steps=3");
  hookforge::config::builder b{std::move(doc)};
  std::printf("config consumer: steps %d\n", b.get<int>("train.params.steps"));
}
