# shellcheck shell=bash
# `--mpi P`: the embarrassingly parallel sweep on a cluster. spawn (common.sh) queues each independent run
# in $OUT_DIR/.mpi_queue; mpi_run_queue starts P copies of mpi_worker.sh under the MPI launcher, and rank r
# runs queue lines r, r + P, r + 2P, ... one after another (one run per rank at a time; each run keeps its
# own seed and output directory, so the results do not depend on P or on which rank ran what). Only the
# launcher is MPI: the workers exchange no messages, they share the output directory (a cluster's shared
# file system). ASYNCDP_MPIRUN replaces the launcher command (default `mpirun`; e.g. `srun` inside a Slurm
# allocation, where P must match the allocation's task count).

# The launcher command as words: ASYNCDP_MPIRUN, or mpirun with Open MPI's flags for running as root and
# for more ranks than cores (this machine; on a cluster the hostfile/allocation decides placement).
mpi_launcher() {
  if [ -n "${ASYNCDP_MPIRUN:-}" ]; then
    printf '%s\n' "$ASYNCDP_MPIRUN"
    return
  fi
  local words=mpirun
  if mpirun --version 2>/dev/null | grep -q 'Open MPI'; then
    [ "$(id -u)" = 0 ] && words+=" --allow-run-as-root"
    words+=" --oversubscribe"
  fi
  printf '%s\n' "$words"
}

mpi_check_launcher() {
  local -a launcher
  read -r -a launcher <<<"$(mpi_launcher)"
  command -v "${launcher[0]}" >/dev/null 2>&1 ||
    die "--mpi needs an MPI launcher: '${launcher[0]}' not found (scripts/install-deps.sh installs Open MPI; ASYNCDP_MPIRUN names another)"
}

# Runs the queued commands over MPI_RANKS ranks, then merges what the ranks recorded: their manifest lines
# into $MANIFEST and their failures into $OUT_DIR/.failed.
mpi_run_queue() {
  local queue=$OUT_DIR/.mpi_queue
  [ -s "$queue" ] || return 0
  local -a launcher
  read -r -a launcher <<<"$(mpi_launcher)"
  local count
  count=$(wc -l <"$queue")
  log "mpi: $count run(s) over $MPI_RANKS rank(s): ${launcher[*]} -np $MPI_RANKS"
  local rc=0
  "${launcher[@]}" -np "$MPI_RANKS" /usr/bin/env ASYNCDP_BIN="$ASYNCDP" OUT_DIR="$OUT_DIR" \
    ASYNCDP_RUN_TIMEOUT="${ASYNCDP_RUN_TIMEOUT:-0}" ASYNCDP_EXPERIMENTS_SCALE="$SCALE" \
    bash "$EXP_DIR/mpi_worker.sh" "$queue" || rc=$?
  local rank_file
  for rank_file in "$OUT_DIR"/.manifest.rank*; do
    [ -f "$rank_file" ] || continue
    cat "$rank_file" >>"$MANIFEST"
    rm -f "$rank_file"
  done
  for rank_file in "$OUT_DIR"/.failed.rank*; do
    [ -f "$rank_file" ] || continue
    cat "$rank_file" >>"$OUT_DIR/.failed"
    rm -f "$rank_file"
  done
  # A launcher failure (a rank killed, a bad host file) leaves runs undone: they count as failed.
  [ "$rc" = 0 ] || echo "the MPI launcher exited with $rc (see its messages above)" >>"$OUT_DIR/.failed"
  rm -f "$queue"
}
