// hookforge/hooks.hpp — every built-in hook in one include (target hookforge::hooks).
// One header per hook under hookforge/hooks/; docs/hooks.md has the table.
#pragma once

// checks.hpp first: a failed attach check is then reported one "included from" line sooner.
#include "hookforge/core/checks.hpp"
#include "hookforge/hooks/batch_image_saver.hpp"
#include "hookforge/hooks/check_invalid_loss.hpp"
#include "hookforge/hooks/checkpoint_saver.hpp"
#include "hookforge/hooks/latest_checkpoint.hpp"
#include "hookforge/hooks/d_warmup.hpp"
#include "hookforge/hooks/default_hooks.hpp"
#include "hookforge/hooks/early_stopping.hpp"
#include "hookforge/hooks/edge_enhanced_input.hpp"
#include "hookforge/hooks/ema.hpp"
#include "hookforge/hooks/empty_cache.hpp"
#include "hookforge/hooks/gradient_clip.hpp"
#include "hookforge/hooks/hook_profiler.hpp"
#include "hookforge/hooks/iter_timer.hpp"
#include "hookforge/hooks/loss_logger.hpp"
#include "hookforge/hooks/lr_warmup.hpp"
#include "hookforge/hooks/metrics_plot.hpp"
#include "hookforge/hooks/mlflow_logger.hpp"
#include "hookforge/hooks/model_summary.hpp"
#include "hookforge/hooks/profiler_hook.hpp"
#include "hookforge/hooks/progress_bar.hpp"
#include "hookforge/hooks/r1_gradient_penalty.hpp"
#include "hookforge/hooks/step_ratio.hpp"
#include "hookforge/hooks/tensorboard_logger.hpp"
