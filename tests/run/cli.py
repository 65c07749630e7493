#!/usr/bin/env python3
"""hookforge-run's command line, tested from outside: exit codes, messages, files.

  cli.py configs  BIN NAME=EXAMPLE_BIN,... CONFIG_DIR
                                               every config passes --check (those naming an
                                               example's classes with it), creating nothing
  cli.py bad      BIN RUN_BAD_DIR CONFIG_BAD_DIR
                                               malformed configs: exit 2, FILE:LINE: message, no file
  cli.py limits   BIN                          a 10 MB file, truncations of the default: never a crash
  cli.py train    BIN CONFIG [--set K=V]...    a short run: exit 0, a closing line, checkpoints
  cli.py default  BIN FILE                     --print-default is FILE, byte for byte
  cli.py strict   BIN CONFIG WARNING ERROR     a warning (holding WARNING); with --strict exit 2 (ERROR)
  cli.py usage    BIN                          command-line mistakes: exit 2, nothing created
  cli.py unwritable BIN CONFIG                 an output directory that cannot be made: exit 1
  cli.py full-disk BIN CONFIG                  the disk fills during a checkpoint: exit 1 naming it, the
                                               last checkpoint kept, --resume ends as a straight run
  cli.py kill     BIN CONFIG [SEED]            SIGKILL at random moments, --resume: same metrics
  cli.py signals  BIN CONFIG [SEED]            SIGTERM and SIGINT at random moments: exit 143 / 130 after
                                               a saved epoch, no temporary file; a second signal stops at
                                               once; --resume: same metrics
  cli.py longer   BIN                          a run resumed with more epochs: the config's cosine T_max
                                               applies from there, and the run says so
  cli.py mid-epoch BIN CONFIG                  checkpoints between batches (ImageFolder, augmentations,
                                               2 workers): SIGKILL and SIGTERM in the middle of an
                                               epoch, --resume: the straight run's metrics, bit for bit
  cli.py nproc    BIN                          --nproc 2 on the shrunk default: the 1-rank run's scores,
                                               files by rank 0 only; config errors exit 2, start nothing
  cli.py nproc-resume BIN                      a 2-rank run killed (the launcher, SIGKILL), resumed and
                                               stopped (the launcher, SIGTERM), resumed: the uninterrupted
                                               2-rank run's scores, bit for bit
  cli.py nproc-kill BIN [SEED]                 a rank SIGKILLed mid-epoch: the launcher exits 1 within
                                               60 s naming it, no rank left
  cli.py overwrite BIN CONFIG                  an earlier run's files are never replaced unless told:
                                               refusals exit 2 naming the file, --overwrite, runs/<config>-2
  cli.py lock     BIN CONFIG [nproc]           a second run into a running run's directory exits 2
                                               naming its pid; a killed run leaves no stale lock
  cli.py top-k    BIN                          save_top_k 2 from the command line: 2 files named with
                                               their scores; export RUN takes the best of them
  cli.py audit-syncs BIN                       --audit-syncs: the hooks that read the device inside
                                               the training steps, at their intervals
  cli.py max-steps BIN                         max_steps from the command line ends the epoch it is
                                               reached in, which validates; -3 exits 2 naming it
  cli.py val-steps BIN                         val_interval_steps from the command line: a line for each
                                               validation between batches, the best checkpoint one of
                                               them, resumed from; -1 exits 2 naming it
  cli.py val-sets BIN                          val_loaders: two named validation sets, scores and the
                                               best checkpoint by set; mistakes exit 2 naming them
  cli.py test-stage BIN                        a test section scores the best checkpoint after
                                               training and with --test-only --resume; mistakes exit 2
  cli.py paths    BIN CONFIG                   a hook's out_dir is taken under --output; one leading
                                               out of it (a symlink too) exits 2 unless
                                               --allow-outside-output; --resume finds the checkpoints
  cli.py two-hosts BIN                         ranks in two network namespaces joined by a veth pair:
                                               the 1-host 2-rank scores bit for bit; the link cut mid-
                                               run ends both within the timeout naming the peer, and
                                               --resume ends as a straight run (exit 77: no namespaces)
Each prints what it checked and exits 1 on the first failure.
"""
import os
import sys

from cli_configs import cmd_bad, cmd_configs, cmd_default, cmd_limits, cmd_strict, cmd_train, cmd_usage
from cli_crashes import cmd_full_disk, cmd_kill, cmd_signals, cmd_unwritable
from cli_hosts import cmd_two_hosts
from cli_loop import cmd_audit_syncs, cmd_max_steps, cmd_test_stage, cmd_top_k, cmd_val_sets, cmd_val_steps
from cli_output import cmd_lock, cmd_overwrite, cmd_paths
from cli_ranks import cmd_nproc, cmd_nproc_kill, cmd_nproc_resume
from cli_resume import cmd_longer, cmd_mid_epoch


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    command, binary = argv[1], os.path.abspath(argv[2])
    rest = [os.path.abspath(a) if os.path.exists(a) else a for a in argv[3:]]
    if command == "configs":
        cmd_configs(binary, rest[0], rest[1])
    elif command == "bad":
        cmd_bad(binary, rest[0], rest[1])
    elif command == "limits":
        cmd_limits(binary)
    elif command == "train":
        sets = [rest[i + 1] for i in range(1, len(rest) - 1, 2) if rest[i] == "--set"]
        cmd_train(binary, rest[0], sets)
    elif command == "default":
        cmd_default(binary, rest[0])
    elif command == "strict":
        cmd_strict(binary, rest[0], rest[1], rest[2])
    elif command == "usage":
        cmd_usage(binary)
    elif command == "unwritable":
        cmd_unwritable(binary, rest[0])
    elif command == "full-disk":
        cmd_full_disk(binary, rest[0])
    elif command == "nproc":
        cmd_nproc(binary)
    elif command == "nproc-resume":
        cmd_nproc_resume(binary)
    elif command == "nproc-kill":
        cmd_nproc_kill(binary, int(rest[0]) if rest else 0)
    elif command == "overwrite":
        cmd_overwrite(binary, rest[0])
    elif command == "two-hosts":
        cmd_two_hosts(binary)
    elif command == "paths":
        cmd_paths(binary, rest[0])
    elif command == "top-k":
        cmd_top_k(binary)
    elif command == "audit-syncs":
        cmd_audit_syncs(binary)
    elif command == "max-steps":
        cmd_max_steps(binary)
    elif command == "val-steps":
        cmd_val_steps(binary)
    elif command == "val-sets":
        cmd_val_sets(binary)
    elif command == "test-stage":
        cmd_test_stage(binary)
    elif command == "lock":
        cmd_lock(binary, rest[0], len(rest) > 1 and rest[1] == "nproc")
    elif command == "signals":
        cmd_signals(binary, rest[0], int(rest[1]) if len(rest) > 1 else 0)
    elif command == "longer":
        cmd_longer(binary)
    elif command == "mid-epoch":
        cmd_mid_epoch(binary, rest[0])
    elif command == "kill":
        cmd_kill(binary, rest[0], int(rest[1]) if len(rest) > 1 else 0)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
