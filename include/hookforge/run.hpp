// hookforge/run.hpp — config-driven runs (target hookforge::run): the torch layer's object
// kinds (model, optimizer, scheduler, stop_condition, loss, metric, dataset, loader), the
// components (training and validation runners, GAN runner, Trainer) with hooks from the
// config, and hookforge-run's command line (run::main), with the built-in hook classes (a
// program of yours registers its runner's hooks next to them). See docs/config.md.
#pragma once

#include "hookforge/config.hpp"
#include "hookforge/hooks.hpp"
#include "hookforge/run/dataset.hpp"
#include "hookforge/run/distributed.hpp"
#include "hookforge/run/hooks.hpp"
#include "hookforge/run/loader.hpp"
#include "hookforge/run/loss.hpp"
#include "hookforge/run/main.hpp"
#include "hookforge/run/metric.hpp"
#include "hookforge/run/model.hpp"
#include "hookforge/run/optimizer.hpp"
#include "hookforge/run/registrations.hpp"
#include "hookforge/run/runners.hpp"
#include "hookforge/run/scheduler.hpp"
#include "hookforge/run/settings.hpp"
#include "hookforge/run/trainer.hpp"
#include "hookforge/run/values.hpp"
