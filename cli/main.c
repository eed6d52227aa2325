/* cli/main.c — `dlperf <command> [options]`: the command table and dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "ops/comm.h"
#include "ops/ops.h"

#define FAMILY_LIST_HELP "peak, memory, model-op, gemm-sweep,\n" \
    "                   gemm-deepbench, conv-deepbench, rnn-deepbench, sparse, cnn-sweep, stream,\n" \
    "                   eltwise, transformer; comm (under mpirun only, alone)"

static const Command commands[] = {
    {"models", cmd_models, "list the built-in models: parameters, size, forward FLOPs",
     "usage: dlperf models [--csv | --json]\n"
     "       dlperf models --export MODEL [--no-quirk] [--output FILE]\n"
     "       dlperf models --from-hf CONFIG [--name NAME] [--context T] [--output FILE]\n\n"
     "Lists the model zoo: parameters (learnable, and as stored with batch-norm statistics in\n"
     "the Keras / Caffe conventions), size in MiB (fp32), forward multiply-adds and FLOPs\n"
     "per sample (GEMM and convolution; GMAC counts a multiply-add once, GFLOP twice),\n"
     "and each model's default batch.\n"
     "  --csv            CSV on stdout (a row per model)\n"
     "  --export MODEL   write MODEL as a JSON model file (docs/model-format.md): a starting\n"
     "                   point for your own models; it profiles and trains identically\n"
     "  --from-hf CONFIG a HuggingFace config.json (GPT-2, OPT or BERT; GPT-3's and Megatron's\n"
     "                   shapes as GPT-2 configs) written as a model file, built as the zoo\n"
     "                   builds GPT-2 and BERT, trained by AdamW with GPT-3's settings\n"
     "  --name NAME      the model's name (default: the config's _name_or_path, its last part)\n"
     "  --context T      the input's steps (default: the config's positions)\n"
     "  --output FILE    where --export and --from-hf write (default: standard output)\n"
     CLI_NO_QUIRK_HELP
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"profile", cmd_profile, "per-layer shapes, parameters, FLOPs per phase and memory of a model",
     "usage: dlperf profile MODEL [--batch N] [--layers] [--json]\n"
     "       dlperf profile --model-file FILE [--batch N] [--layers] [--json]\n"
     "       dlperf profile MODEL [--batch N] --ops [--csv | --json]\n\n"
     "The profile comes from the same expansion as the training step and the prediction:\n"
     "FLOPs per phase for one iteration, and the memory a run allocates, by category.\n"
     "  --batch N        batch size (default: the model's)\n"
     "  --layers         one row per layer: output shape, params, FLOPs per phase,\n"
     "                   activation and workspace bytes\n"
     "  --ops            the training step's distinct ops: their keys (what calibrations and\n"
     "                   imports store), how often each runs, FLOPs and bytes\n"
     "  --csv            with --ops: as CSV, the input of tools/gpu_calibrate.py --ops\n"
     CLI_MODEL_FILE_HELP
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"calibrate", cmd_calibrate, "measure this machine's operation speeds into the database",
     "usage: dlperf calibrate [--quick | --full] [--only FAMILY,...] [--models MODEL,...] [--model-file FILE]\n"
     "                        [--tp T] [--batch N] [--rounds N] [--budget MIN] [--threads N] [--db FILE] [--json]\n"
     "       dlperf calibrate --show [--verbose] [--ranks P] [--threads N] [--db FILE] [--csv | --json]\n"
     "       dlperf calibrate --show --device NAME [--db FILE] [--csv | --json]\n\n"
     "Measures the machine's limits (FMA peak on one and on all cores; read and triad\n"
     "bandwidth of each memory level), the ops of the models' training steps, GEMM sweeps,\n"
     "DeepBench's GEMM, convolution (three phases), RNN and sparse kernels with seed 004's\n"
     "shapes, STREAM and element-wise / pooling / normalisation / optimizer sweeps, following\n"
     "the protocol in DESIGN.md: warm-ups discarded, repetitions until the 95% CI is within\n"
     "5% (quick) or 3% of the median or a time cap, every result validated outside the timed\n"
     "region. Every measurement is stored with the machine fingerprint and the software it\n"
     "ran on (threads, OpenBLAS kernels and how they were chosen). Ctrl-C marks the\n"
     "calibration interrupted; an interrupted calibration is never used for predictions.\n"
     "  --quick          a few shapes of each family (under a minute on 2 cores)\n"
     "  (default)        DeepBench rows up to 100 GFLOP per kernel, full sweeps (8-14 min on 2\n"
     "                   cores; 15 at most where the sampling can shrink to fit: --budget)\n"
     "  --full           DeepBench's complete lists (the largest GEMMs run 15 s each on 2 cores)\n"
     "  --only LIST      families to measure: " FAMILY_LIST_HELP "\n"
     "                   (default: all)\n"
     "  --models LIST    models whose training-step ops model-op measures; 'suite' and 'zoo'\n"
     "                   name groups (default: suite; with --quick none)\n"
     "  --batch N        batch size of those ops (default: --quick each model's; else the\n"
     "                   largest up to the model's whose step is at most 300 GFLOP)\n"
     "  --tp T           those models as one of T tensor-parallel ranks' shares: their ops at\n"
     "                   the shapes a rank runs (run --tp); with --only comm, the shares'\n"
     "                   gradient buffers\n"
     "  --rounds N       measure the lists in N passes (1-10, default 1), each kernel taking a\n"
     "                   1/N share of its samples per pass, priced by the median of the\n"
     "                   passes' medians: on a shared machine a burst of contention in one\n"
     "                   pass then does not set the price; costs the warm-ups and checks N\n"
     "                   times; with --only comm the same for the collectives\n"
     "  --budget MIN     the calibration's time at most, in minutes (default: 15 in the default\n"
     "                   mode with one round, else none; 0: none): once the kernels so far\n"
     "                   project past it, the later ones sample for less time (their minimum\n"
     "                   samples still taken), then sweep kernels are left out (priced by the\n"
     "                   fitted model), and the near catch-up gets what is left\n"
     "  --only comm      under mpirun -np P: MPI_Allreduce (in place) from 4 B to 256 MiB,\n"
     "                   DeepBench's all-reduce sizes and, with --models, those models'\n"
     "                   gradient buffers; broadcast; ping-pong latency and bandwidth (OSU\n"
     "                   style); then the memory one allreduce adds to a rank (the MPI\n"
     "                   library's scratch) at those gradient sizes and 1 MiB and up;\n"
     "                   stored with the rank count and the MPI library's version\n"
     "  --show           print the latest complete calibration as people read it: achieved\n"
     "                   GFLOP/s and GB/s against the measured limits, per family\n"
     "  --verbose        with --show: also where the host put the threads' cores and how each\n"
     "                   kernel is priced from that, the memory levels' definitions, retention\n"
     "  --ranks P        with --show: the calibration P ranks measured at once under mpirun\n"
     "                   (the one data-parallel predictions of P ranks per node use)\n"
     "  --device NAME    with --show: the evidence of a device that is not this machine (its\n"
     "                   imported calibrations): op kinds, phases, precisions, shapes, times,\n"
     "                   frameworks, and the kernel forms fitted to them\n"
     "  --csv            with --show: CSV on stdout. A calibration: its limits and families'\n"
     "                   rates as one long table, one value a row (the two differ in shape):\n"
     "                   calibration_id,section,name,kind,phase,level,threads,quantity,value,unit\n"
     "                   with section limits (fma_peak, cache, read, triad, handoff, cross_core,\n"
     "                   stream_triad ...; quantity best) or family (quantity kernels, min,\n"
     "                   median, max, median_fraction_of_limit), rates in FLOP/s or B/s; the\n"
     "                   rest (fits, DeepBench RNN rows, communication): --json. With --device:\n"
     "                   a row per evidence group of the database (op kind, phase, precision;\n"
     "                   a built-in profile's groups: the text or --json)\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"import", cmd_import, "store measurements made elsewhere as a calibration of that device",
     "usage: dlperf import FILE... --device NAME [--format dlperf|neusight|deepbench|cde]\n"
     "                     [--precision P] [--dry-run] [--db FILE] [--json]\n\n"
     "Stores the measurements of a device dlperf does not run on (a GPU timed with\n"
     "tools/gpu_calibrate.py, or published per-op results) as calibrations of its spec sheet,\n"
     "one per precision: each row under the op key the predictor prices, with its precision,\n"
     "the framework and libraries that timed it, what its time covers and FILE:LINE.\n"
     "Predictions for systems of that device price from them; other devices' predictions\n"
     "carry them over by the sheets. Every row of every file is checked first: a bad row\n"
     "refuses the import with FILE:LINE, the field and what would be valid, and nothing is\n"
     "written. Rows of other devices (files that list several), of precisions dlperf does not\n"
     "price (int8) or without a time are counted and skipped. Formats: docs/import-format.md.\n"
     "  --device NAME    the device's spec sheet ('dlperf systems'; rows whose device column\n"
     "                   names another device, by the sheet's name or aliases, are skipped)\n"
     "  --format F       the files' format (default: recognised from each file's header)\n"
     "  --precision P    import only rows of this precision\n"
     "  --dry-run        read and check everything, store nothing\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"predict", cmd_predict, "predict iteration time and memory of a model from the calibration",
     "usage: dlperf predict MODEL|--model-file FILE [--batch N] [--threads N] [--ops] [--holdout]\n"
     "                      [--device-memory SIZE] [--ranks P [--tp T]] [--csv | --json]\n"
     "       dlperf predict MODEL|--model-file FILE --batches LIST [--device-memory SIZE] [--csv | --json]\n"
     "       dlperf predict MODEL --system NAME [--nodes N] [--precision P] [--allreduce A] [--overlap]\n"
     "                      [--no-host] [--mode M] [--without-own] [--no-profiles]\n"
     "       dlperf predict MODEL --device NAME [--precision P] [--no-host] [--mode M] [--without-own]\n"
     "       dlperf predict MODEL --system NAME --pipeline S [--micro-batches M]\n"
     "       dlperf predict MODEL --system NAME --nodes N --batch B --tp T --pp P [--sp] [--recompute R]\n"
     "                      [--micro-batch b] [--interleave V] [--zero1] [--precision P]\n"
     "       dlperf predict MODEL --system NAME --nodes N --batch B --search\n"
     "       dlperf predict --summa N --system NAME [--nodes N] [--precision P]\n\n"
     "Prices every op of one training iteration from the latest complete calibration of\n"
     "this machine at this thread count: an exact measurement when the calibration has the\n"
     "op's shape, else the same op scaled from another batch size, else the fitted model\n"
     "(local regression over the calibration's shapes, bounded by the measured roofline);\n"
     "the source and uncertainty band of each price are shown. Also: the step's GFLOP/s\n"
     "against the measured peak, its bottleneck (compute- or memory-bound ops by their roofline,\n"
     "communication), time by op kind and phase, memory per process by category, whether it\n"
     "fits, and the largest batch that does.\n"
     "  --batch N        batch size (default: the model's)\n"
     "  --ops            list every op (default: the 15 most expensive)\n"
     "  --batches LIST   the step and its memory at each batch (16,32,...,512; 8-64; a list):\n"
     "                   time per iteration and per sample, GFLOP/s against the peak, the\n"
     "                   bottleneck, model state, activations, the process and whether it fits\n"
     "  --csv            CSV on stdout: this machine, a row per op (key, time, band, what priced\n"
     "                   it); a system, one row (step, allreduce, iteration, epoch, memory)\n"
     "  --holdout        price without any measurement of this model's own shapes (fitted\n"
     "                   model only): how far the fit carries to shapes never measured\n"
     "  --device-memory SIZE  memory of the device or process (80GB, 16GiB; default: what\n"
     "                   this machine has available now)\n"
     "  --ranks P        data-parallel on this machine (mpirun -np P): --batch per rank, cores\n"
     "                   shared by the ranks, the gradients' allreduce from the communication\n"
     "                   calibration ('mpirun -np P dlperf calibrate --only comm')\n"
     "  --ranks P --tp T this machine's job of P/T tensor-parallel groups (run --tp): one rank's\n"
     "                   share, --batch per group, the group's sums priced from the T-rank\n"
     "                   communication calibration\n"
     "A spec-sheet system instead of this machine (see 'dlperf systems'):\n"
     "  --system NAME    price each op on the system's device from the best evidence there is\n"
     "                   (its own imported measurements, other GPUs' carried over by their\n"
     "                   sheets, a similar op's, last this machine's efficiency on its roofline;\n"
     "                   docs/gpu-pricing.md), no faster than an eager framework's host issues\n"
     "                   the ops; --batch per device\n"
     "  --device NAME    one device of a sheet on its own, priced the same way (no network)\n"
     "  --mode M         the step priced: train (default), fwd-bwd (gradients only, as\n"
     "                   convnet-benchmarks times) or forward\n"
     "  --without-own    price the device as if it had no evidence of its own (what the\n"
     "                   other GPUs' evidence alone says of it)\n"
     "  --no-profiles    GPU evidence from the database only, not the built-in profiles of\n"
     "                   systems/profiles/ (devices the database has measurements of use those)\n"
     "  --nodes N        nodes (default 1), one rank per device\n"
     "  --precision P    fp32 (default), fp16, bf16, tf32 or fp64: the device's peak and bytes\n"
     "  --allreduce A    ring, tree, rec-doubling, rec-halving, hierarchical (default:\n"
     "                   hierarchical with several devices per node, else ring)\n"
     "  --overlap        allreduce in buckets during backward (Horovod) instead of after it\n"
     "  --no-host        the device time alone (a compiled or graph-captured step): without the\n"
     "                   host's time per op and per step of an eager framework (the device\n"
     "                   sheet's host figures; a GPU's default: PyTorch eager as measured)\n"
     "  --pipeline S     model parallel instead: the layers in S stages balanced by time (GPipe);\n"
     "                   --batch is the mini-batch, split into --micro-batches M (default 4 S);\n"
     "                   the slot, the bubble, the boundary transfers\n"
     "A transformer under Megatron-style parallelism (predictor/transformer_parallel.h):\n"
     "  --tp T           tensor parallel inside a node: each block's heads and MLP split T ways\n"
     "  --pp P           pipeline parallel: P stages of the blocks, 1F1B; data parallel is what\n"
     "                   the GPUs leave (nodes x devices / (T P)); --batch is the global batch\n"
     "  --sp             sequence parallel (norms, dropouts, adds on 1/T of the tokens)\n"
     "  --recompute R    none (default), selective (the attention core) or full\n"
     "  --micro-batch b  sequences a micro-batch (default 1)\n"
     "  --interleave V   V model chunks a stage (the interleaved schedule)\n"
     "  --zero1          the distributed optimizer: its state split over the replicas\n"
     "  --search         the fastest configuration that fits the devices' memory\n"
     "                   (time: compute, recomputation, collectives, sends, bubble, gradients,\n"
     "                   optimizer; memory per GPU: weights, gradients, optimizer, activations)\n"
     "  --summa N        no MODEL: seed 003's SUMMA estimate of an N x N x N GEMM on the\n"
     "                   system's devices (--nodes): compute, data, the bandwidth to stay\n"
     "                   compute-bound\n"
     CLI_MODEL_FILE_HELP
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"run", cmd_run, "really train a model: time its steps, or train it to a result",
     "usage: dlperf run MODEL [--steps N] [--warmup N] [--batch N] [--trace] [--mode M] [--csv | --json]\n"
     "       mpirun -np P dlperf run MODEL [--scaling strong|weak] [--overlap [--bucket-mib N]] [--tp T] [--steps N]\n"
     "       dlperf run MODEL --protocol convnet [--batch N]\n"
     "       [mpirun -np P] dlperf run MODEL --epochs N [--batch N] [--data-dir DIR] [--save FILE] [--load FILE]\n\n"
     "Timing (default): trains on the model's seeded synthetic batches, excludes warm-up steps\n"
     "from the statistics and stores the run. The whole memory is allocated once, before the\n"
     "first step; a batch that would not fit is refused.\n"
     "  --steps N        timed steps (default 10)\n"
     "  --warmup N       untimed steps first (default 2)\n"
     "  --batch N        batch size (default: the model's)\n"
     "  --trace          time every op of every step and store the per-op medians\n"
     "  --mode M         train (forward, backward, update; default), fwd-bwd (gradients only,\n"
     "                   as convnet-benchmarks times it) or forward (inference)\n"     "  --csv            the steps as CSV on stdout, a row each (warm-up ones flagged)\n"
     "Under mpirun -np P (data-parallel; rank 0 stores the run with every rank's times):\n"
     "  --scaling S      strong (default: --batch is the global batch, split over the ranks) or\n"
     "                   weak (--batch per rank)\n"
     "  --overlap        sum the gradients in buckets, each started as soon as backward wrote\n"
     "                   it (Horovod's tensor fusion), instead of one allreduce after backward\n"
     "  --bucket-mib N   the bucket size with --overlap (default 64, Horovod's)\n"
     "  --tp T           tensor parallel (Megatron-LM's splits): each group of T consecutive\n"
     "                   ranks trains one copy of the model, its attention heads and MLPs split\n"
     "                   T ways, their partial results summed over the group inside the step;\n"
     "                   the copies are data-parallel (P/T of them). The shares start from the\n"
     "                   whole model's initial parameters: the job trains as one process would\n"
     "  --protocol convnet  the suite's protocol: 10 warm-up and 100 timed steps, forward and\n"
     "                   forward-backward, mean and sd per batch (per sample for RNNs)\n"
     "Training to a result:\n"
     "  --epochs N       epochs over the model's data set (Fashion-MNIST for the fmnist-*,\n"
     "                   sparse-ae and ufldl-cnn models; else the model's synthetic data with\n"
     "                   the reference's sample counts), evaluating after each epoch; reports\n"
     "                   the reference metrics and seed 004's total execution time, total\n"
     "                   inference time (weights load + test-set prediction) and FLOP/s\n"
     "  --data-dir DIR   Fashion-MNIST directory (default /usr/share/datasets/fashion-mnist)\n"
     "  --save FILE      write the trained weights; --load FILE starts from saved weights\n"
     "  under mpirun, every rank trains its share of each global batch of the same epoch\n"
     "  (--scaling as above); rank 0 evaluates, saves and reports\n"
     CLI_MODEL_FILE_HELP
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"systems", cmd_systems, "spec sheets of devices, interconnects and systems (what-if machines)",
     "usage: dlperf systems [--csv | --json]\n"
     "       dlperf systems show NAME [--csv | --json]\n"
     "       dlperf systems add FILE [--replace]\n"
     "       dlperf systems profile NAME... [--out-dir DIR] [--note TEXT]...\n\n"
     "Lists the spec sheets predictions for machines that need not exist are made from:\n"
     "devices (peak FLOP/s per precision, memory bandwidth and capacity), interconnects\n"
     "(bandwidth per direction, latency) and systems (device x devices per node, the links\n"
     "inside and between nodes). Every figure cites its public source. Built in from the\n"
     "repository's systems/ (systems/README.md has the formats); 'add' validates a JSON file\n"
     "(each bad field named with what would be valid) and stores it in the database, where\n"
     "it shadows a built-in of the same name. A system's device may be \"calibrated\": this\n"
     "machine, priced from its calibration.\n"
     "'profile' writes a device's measurements in the database (dlperf import) as a compact\n"
     "profile: per precision, each op group's fitted kernel-form parameters, band and a sample\n"
     "of the shapes, with the imports' sources; no measured time. Profiles in systems/profiles/\n"
     "are built in: what a fresh clone prices GPUs from (scripts/make-profiles.sh makes them\n"
     "from the public data sets; docs/gpu-pricing.md).\n"
     "  --replace        let 'add' replace a spec added earlier under the same name\n"
     "  --out-dir DIR    'profile': write DIR/NAME.json for each NAME (default: one to stdout)\n"
     "  --note TEXT      'profile': provenance to record (repository and commit of the data)\n"
     "  --csv            the list (name,kind,title,origin: a row per sheet) or 'show NAME' (a\n"
     "                   header and one row: the list's columns, then the kind's figures in SI\n"
     "                   base units, the unit in the column name, e.g. peak_fp32_flops_per_s,\n"
     "                   mem_bw_bytes_per_s, latency_s; empty where the sheet gives none; the\n"
     "                   sources: the text or --json) as CSV on stdout\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"sweep", cmd_sweep, "predicted scaling of a model over node counts of a system: table, CSV, plot",
     "usage: dlperf sweep MODEL|--model-file FILE --system NAME [--nodes LIST] [--batch N | --global-batch N]\n"
     "                    [--precision P] [--allreduce A|all] [--overlap] [--no-host] [--no-profiles]\n"
     "                    [--csv | --json]\n"
     "                    [--plot FILE.svg]\n\n"
     "Predicts data-parallel training of MODEL on NAME (see 'dlperf systems') for every node\n"
     "count: compute per device (each op from the best GPU evidence, as predict --system),\n"
     "the gradients' allreduce over the system's links, iteration and epoch time, speedup\n"
     "over one device, scaling efficiency and the communication fraction.\n"
     "  --nodes LIST     node counts: 1,2,4,...,4096 (default; '...' continues the ratio or\n"
     "                   the step of the two counts before it), 8-64 (every count), or a list\n"
     "  --batch N        per device, fixed: weak scaling (default: the model's batch)\n"
     "  --global-batch N split over the devices: strong scaling (counts with fewer samples\n"
     "                   than devices are skipped)\n"
     "  --precision P    fp32 (default), fp16, bf16, tf32 or fp64\n"
     "  --allreduce A    ring, tree, rec-doubling, rec-halving, hierarchical, or all (default:\n"
     "                   hierarchical with several devices per node, else ring)\n"
     "  --overlap        allreduce in buckets during backward instead of after it\n"
     "  --no-host        the device time alone, without an eager framework's host time per op\n"
     "  --no-profiles    GPU evidence from the database only, not the built-in profiles\n"
     "  --csv            CSV on stdout (one row per configuration)\n"
     "  --plot FILE.svg  time per epoch, speedup, efficiency and communication fraction against\n"
     "                   nodes, drawn by gnuplot (FILE.png: a PNG)\n"
     CLI_MODEL_FILE_HELP
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"report", cmd_report, "an HTML page of what the database holds, its figures drawn by gnuplot",
     "usage: dlperf report --out DIR [--system NAME] [--model MODEL] [--json]\n\n"
     "Writes DIR/index.html, one self-contained page (its SVG figures inline), and beside it\n"
     "each figure's SVG, data (CSV) and gnuplot script: this machine's roofline with its\n"
     "calibrated kernels, predicted against measured for every validated model, where their\n"
     "time goes by op kind, their memory by category, a model's predicted scaling on a\n"
     "system, seed 000's FOMs for titan, summit and dgx-a100 with this machine's stored suite\n"
     "run, and the GPUs with evidence. A figure whose data is not there yet says which\n"
     "command makes it (report/report.h).\n"
     "  --out DIR        the folder (created if missing)\n"
     "  --system NAME    the scaling figure's system (default dgx-a100)\n"
     "  --model MODEL    and its model (default resnet50)\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"suite", cmd_suite, "seed 000's suite run on this machine under its rules, its FOMs stored",
     "usage: dlperf suite [--quick] [--only B,...] [--instances N] [--csv | --json]\n"
     "       dlperf suite --show [ID | --combined] [--csv | --json]\n\n"
     "Runs the procurement suite's benchmarks (seed 000) on this machine in throughput mode:\n"
     "for each, N instances at once as processes of their own, N the most this machine holds\n"
     "(one per core at least, within its available memory), and the slowest instance's time:\n"
     "AlexNet, GoogLeNet, Overfeat and VGG forward and forward-backward per batch over 100\n"
     "steps after 10 of warm-up, the LSTM per sample, CANDLE P1B1 and P3B1 the reference\n"
     "configuration's training run with the accuracy it reached (on the zoo's synthetic\n"
     "stand-ins of their data sets: recorded, not a criterion), ResNet-50 timed iterations\n"
     "projected to 90 ImageNet epochs (marked projected). Each FOM as the seed defines it\n"
     "against its Titan table (ResNet-50 against Titan as priced: the seed gives no time), the\n"
     "groups' and the overall. Every run is stored; --show shows one again (default: this\n"
     "machine's latest complete run). A full run takes hours on 2 cores.\n"
     "  --quick          a test of the machinery (a sixteenth of each batch, 2 timed steps;\n"
     "                   CANDLE one epoch of 4 batches): NOT a valid FOM\n"
     "  --only B,...     these benchmarks (p1b1, p3b1, alexnet, googlenet, overfeat, vgg, lstm,\n"
     "                   resnet50); the overall FOM needs them all\n"
     "  --instances N    instances at once of each throughput benchmark (default: as above)\n"
     "  --show [ID]      a stored run\n"
     "  --show --combined  each benchmark's latest full-protocol result of this machine, from\n"
     "                   whichever run: a suite too long for one sitting run in parts (--only),\n"
     "                   its FOMs and the overall as one\n"
     "  --csv            CSV on stdout (a row per benchmark and the overall)\n"
     "(--instance NAME runs one instance and prints its times as JSON: what the suite spawns)\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"fom", cmd_fom, "seed 000's figures of merit predicted for a proposed system, against Titan",
     "usage: dlperf fom --system NAME|FILE [--nodes N] [--per-device K] [--precision P] [--no-host]\n"
     "                  [--optimized] [--resnet-accuracy PCT] [--no-profiles] [--csv | --json]\n\n"
     "The what-if the procurement suite exists for (seed 000): how many instances of each of\n"
     "its benchmarks the system runs at once (CANDLE P1B1 and P3B1, AlexNet, GoogLeNet,\n"
     "Overfeat, VGG, the LSTM in throughput mode; 50 data-parallel ResNet-50 instances on 2%\n"
     "of the system each), each instance's time as 'predict --system' prices it, each\n"
     "benchmark's FOM, the groups' (geometric means) and the overall (weights 5, 1, 2, 5),\n"
     "with bands from the prices'. Two references: the seed's Titan table, and Titan as\n"
     "dlperf prices it (the same predictor on both sides); the seed gives no ResNet-50 time,\n"
     "so its FOM is against the priced one. Titan's priced times are shown beside the seed's.\n"
     "How instances share a device and what each time covers: suite/fom.h.\n"
     "  --system NAME|FILE  the proposed system ('dlperf systems') or a system sheet's file\n"
     "  --nodes N        the system's size (default: its sheet's nodes; a building block: 1)\n"
     "  --per-device K   throughput instances per device (default: as many as pay, within\n"
     "                   the device's memory)\n"
     "  --precision P    fp32 (default; the base run), fp16, bf16, tf32, fp64 (the optimized run)\n"
     "  --no-host        device time alone (a compiled step), no eager framework's host time\n"
     "                   (the optimized run)\n"
     "  --optimized      the optimized run (seed 000: other code or frameworks, reduced precision):\n"
     "                   ResNet-50's FOM times 1 + ((acc - 74.9) / 25.1)^3; the base run is the\n"
     "                   reference code at fp32, eagerly\n"
     "  --resnet-accuracy PCT  the optimized run's ResNet-50 top-1 accuracy (default 74.9, the\n"
     "                   least the rules accept: a prediction reaches no accuracy)\n"
     "  --no-profiles    GPU evidence from the database only, not the built-in profiles\n"
     "  --csv            CSV on stdout (a row per benchmark, group and the overall)\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
    {"validate", cmd_validate, "predict, then run, then compare: the error of the prediction",
     "usage: dlperf validate [MODEL... | --zoo] [--model-file FILE] [--holdout] [--trace] [--steps N] [--warmup N]\n"
     "                       [--min-time S] [--rounds N] [--wait-near S] [--batch N] [--threads N]\n"
     "                       [--csv | --json]\n"
     "       mpirun -np P dlperf validate MODEL... [--scaling S] [--tp T] [--batch N] [--steps N] [--rounds N]\n"
     "       dlperf validate --device NAME [--without-own] [--no-profiles] [--format F] [--precision P]\n"
     "                       [--csv OUT] FILE...\n\n"
     "For each model (default: p1b1, alexnet-owt, basic-lstm): predicts first, then trains\n"
     "with a per-op trace, then prints and stores predicted s/iter, measured median s/iter\n"
     "(min..max), the error, the memory the run planned against its peak RSS, the error\n"
     "summary over the models, a per-op-kind error table and the ops missed most. The\n"
     "database view validation_op holds every op's predicted and measured time. On two\n"
     "threads or more, where the threads' cores were (near, apart, one core) is probed\n"
     "around each run and each step; the errors are also given with each run and each\n"
     "step priced at its own placement (the placed and by-step columns).\n"
     "  --zoo            every model of the zoo, each at the largest batch up to its default\n"
     "                   whose training step is at most 300 GFLOP (default calibrations\n"
     "                   measure the suite's model ops at that batch; 'calibrate --models zoo'\n"
     "                   all of them)\n"
     "  --holdout        also predict from the calibration without any measurement of the\n"
     "                   validated models' shapes (fitted model only), beside the full one\n"
     "  --trace          list every op, predicted against measured, sorted by absolute miss\n"
     "  --steps N        timed steps (default 5)\n"
     "  --min-time S     and more until the timed steps add up to S seconds (default 2; 0:\n"
     "                   exactly N): a model of millisecond steps is timed over seconds of\n"
     "                   a shared machine, not over one burst of its contention\n"
     "  --warmup N       untimed steps first (default 1)\n"
     "  --rounds N       run each model N times, one pass over all the models per round, and\n"
     "                   measure it by the median of its rounds' medians, as calibrate\n"
     "                   --rounds prices kernels (default 1, at most 10): a stretch of a\n"
     "                   shared machine's noise then sets no model's time; the validation\n"
     "                   rows point at the round nearest that median, every run is stored\n"
     "  --wait-near S    on two threads or more, a round that finds the threads' cores apart\n"
     "                   (a round trip x2.5 the calibration's fastest or more) first waits up\n"
     "                   to S seconds for them to come near, the placement the calibration\n"
     "                   priced (default 120; all waits at most the runs' own time + 30 s;\n"
     "                   0: run at any placement)\n"
     "  --batch N        batch size for every model (default: each model's)\n"
     "  --csv            the results as CSV on stdout: a row per model and calibration (full,\n"
     "                   holdout); under mpirun a row per model with its compute and allreduce\n"
     "  --scaling S      under mpirun: strong (the batch split over the ranks) or weak (a\n"
     "                   batch per rank), as for run\n"
     "  --tp T           under mpirun: tensor parallel in groups of T ranks, as for run; the\n"
     "                   group's sums inside the step priced from the communication calibration\n"
     "                   of T ranks, the shares' ops from a calibration of them (calibrate --tp)\n"
     CLI_NO_QUIRK_HELP
     "\n--device NAME FILE...: a device that is not this machine, checked against measurements\n"
     "the database did not learn from: every row of the files (formats as for import) is\n"
     "priced on NAME from the evidence (its own, else other devices' carried over by their\n"
     "sheets) and compared with its time; errors by op class and by what priced each row.\n"
     "  --without-own    price NAME as if it had no evidence of its own (leave one device out)\n"
     "  --no-profiles    the database's evidence only, not the built-in profiles\n"
     "  --format F       dlperf, neusight, deepbench or cde (default: from each file's header)\n"
     "  --precision P    the rows' precision to compare (default fp32)\n"
     "  --csv OUT        every row's measured and predicted time and source, as CSV\n"
     "\ncommon options:\n" CLI_COMMON_HELP},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *out)
{
    fprintf(out,
            "dlperf %s — how long will this model take to train on this machine, and why?\n\n"
            "usage: dlperf <command> [options]   (dlperf <command> --help for details)\n\ncommands:\n",
            DLPERF_VERSION);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\ncommon options:\n" CLI_COMMON_HELP);
    fprintf(out, "\nenvironment:\n"
                 "  DLPERF_DB              the database (as --db)\n"
                 "  DLPERF_MEM_AVAILABLE   memory available to the node's processes (e.g. 16GiB), instead of\n"
                 "                         /proc/meminfo's: every fit check sizes against it\n"
                 "  DLPERF_FASHION_MNIST   Fashion-MNIST's directory (as --data-dir)\n"
                 "  OPENBLAS_CORETYPE      the OpenBLAS kernels (default: the fastest, probed once)\n"
                 "  OMP_WAIT_POLICY        how idle OpenMP threads wait (default: libgomp's; PASSIVE for\n"
                 "                         ranks that share a node)\n");
}

int main(int argc, char **argv)
{
    ops_flush_denormals(); /* before any compute thread starts (ops.h says why) */
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("dlperf %s (%s)\n", DLPERF_VERSION, dlperf_git_commit());
        return EXIT_OK;
    }
    Cli cli = {.cmd = name, .threads = cli_default_threads(), .argv = argv};
    db_default_path(cli.db_path, sizeof cli.db_path);
    if (strcmp(name, "__blas-probe") == 0)
        return cmd_blas_probe(argc - 1, argv + 1, &cli);
    /* the memory a node has available, for every fit check: rehearse a calibration or a job
     * for a smaller node (and test the checks) on this one */
    const char *avail = getenv("DLPERF_MEM_AVAILABLE");
    if (avail) {
        double bytes;
        if (cli_parse_bytes(&cli, "DLPERF_MEM_AVAILABLE", avail, &bytes) != 0)
            return EXIT_USAGE;
        mem_available_override(bytes);
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        if (strcmp(commands[i].name, name) != 0)
            continue;
        /* under mpirun, only the commands that use the ranks together take part: the others
         * would repeat their work and their database writes once per rank */
        if (comm_env_size() > 1 && strcmp(name, "run") != 0 && strcmp(name, "validate") != 0 &&
            strcmp(name, "calibrate") != 0)
            return cli_error(&cli, EXIT_USAGE, "'%s' runs on one process; under mpirun only run, validate and "
                                               "calibrate --only comm use the ranks (for this machine's data-parallel "
                                               "prediction: dlperf predict MODEL --ranks P)", name);
        /* a signal ends any command with a line saying what it kept (cli/interrupt.h);
         * calibrate and suite stop at their own checks instead */
        interrupt_exit_on_signal(commands[i].name);
        int rc = commands[i].fn(argc - 1, argv + 1, &cli);
        /* under MPI: finalize, or abort the whole job so no rank waits for a failed one */
        return comm_finish(rc < 0 ? EXIT_OK : rc); /* -1: --help was printed */
    }
    fprintf(stderr, "dlperf: unknown command '%s'; commands:", name);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(stderr, " %s", commands[i].name);
    fprintf(stderr, " (see dlperf --help)\n");
    return EXIT_USAGE;
}

/* The usage text of a command, for cli_parse. */
const char *command_usage(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].usage;
    return "";
}
