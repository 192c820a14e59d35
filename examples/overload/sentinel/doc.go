// Command sentinel is the overload command (examples/overload) with
// Sentinel-Go's system rule beside sluice's protections, in one process:
// the same CPU-bound backend, load generator and table, so that the
// figures of examples/overload's doc ("The CPU-bound benchmark") can be
// measured again. It is a benchmark-only module: its dependencies
// (github.com/alibaba/sentinel-golang v1.0.4) stay out of the examples
// module, and CI neither tests nor releases it (.ci/test leaves it out).
//
//	go -C examples/overload/sentinel run . -backend cpu -service 20ms -warmup 3s -duration 5s -load 1,2,5,10 -slowdown=false -priority=false -protect none,adaptive,system,system-always,sentinel-bbr
//
// runs the comparison, about 3 minutes; run.sh runs the same (its flags
// by default, or those given), and gets Sentinel-Go where the module proxy
// does not serve it (see below). Every flag of examples/overload applies;
// the rows run load by load (engine.Program.Interleave): at each load
// every protection runs within a minute of the others, on a host whose
// load drifts. The protections added to examples/overload's:
//
//   - sentinel-bbr: Sentinel-Go's system.Rule{MetricType: CpuUsage,
//     TriggerCount: 0.8, Strategy: BBR}, as sluice's system protection
//     (cpu, 0.8, bbr). Each request is wrapped in api.Entry(route,
//     WithResourceType(ResTypeWeb), WithTrafficType(Inbound)) and Exit,
//     as Sentinel's gin and echo adapters do; a blocked one is answered
//     503, as sluice answers a refusal.
//   - sentinel-load: the rule Sentinel's documentation recommends for BBR,
//     MetricType Load (the machine's load1) over 2.5 per CPU.
//   - system-always: sluice's system protection with threshold 0.01, its
//     BBR bound applying whenever the process uses 1% of its CPUs. That is
//     the state Sentinel's CpuUsage rule is in: it reads the process's CPU
//     in percent (gopsutil's Process.Percent: 46-140 in the run below)
//     against a threshold it allows only in [0, 1], so its BBR check
//     applies at any load.
//
// After each trial a "trace" line on the standard error gives the
// process's CPU share (per second, as sluice's cpu signal reads it), the
// machine's, and for a Sentinel trial what Sentinel's check read: its CPU
// and load1, the requests in flight, the minimum RT and the completions
// per second whose product is the BBR bound. Sentinel's logs go to
// $SENTINEL_LOG_DIR, else $TMPDIR/sluice-overload-sentinel.
//
// # go.sum and a module proxy without Sentinel-Go
//
// Sentinel-Go was out of the reach of this machine's module proxy when
// this module was written (403; the proxy still answers 403 for its
// version list), so go.sum's line for it was made from the tag: a module
// zip of tag v1.0.4 of a git mirror of the repository
// (golang.org/x/mod/zip.CreateFromVCS, the go command's rules), with its
// .info and .mod, served as a file GOPROXY from a temporary directory,
// GONOSUMDB naming that module only, and go mod tidy wrote go.sum:
//
//	github.com/alibaba/sentinel-golang v1.0.4 h1:i0wtMvNVdy7vM4DdzYrlC4r/Mpk1OKUUBurKKkWhEo8=
//
// It is the hash sum.golang.org records: later that day (2026-11-28) the
// proxy served v1.0.4, and go mod download, with no go.sum, checked it
// against the checksum database (through the proxy). The go command's own
// zip of the tag (GOPROXY=direct, the git origin rewritten to the mirror)
// gives the same hash. Where the proxy does not serve the module, run.sh
// builds such a file proxy first, with that zip of the tag from the clone
// SENTINEL_MIRROR names, and go.sum checks what it built:
//
//	SENTINEL_MIRROR=/path/to/sentinel-golang.git examples/overload/sentinel/run.sh
//
// The sluice modules are those of this checkout (replace directives):
// .ci/release does not bump this module's requirements, which the
// replacements make moot.
//
// # A run
//
// 2026-11-29, 06:20 UTC, run.sh with its flags (the command above), main
// b76add7, on this project's 2-vCPU VM otherwise idle (load average 2.4 at
// the start, 2.2 at the end): capacity 95 requests/s, unloaded p50 21.0ms,
// p99 24.4ms:
//
//	   protection  load  offered/s  goodput/s  of capacity     p50      p99  p99/unloaded  rejected  timed out  limit  sched p99
//	         none    1x         95         95         100%  63.0ms  117.1ms          4.8x        0%         0%      -     21.0ms
//	     adaptive    1x         95         92          97%  45.9ms   83.0ms          3.4x        3%         0%      5     21.0ms
//	       system    1x         95         94          99%  25.8ms   40.0ms          1.6x        1%         0%      3     21.0ms
//	system-always    1x         95         95         100%  22.4ms   35.2ms          1.4x        0%         0%      3     21.0ms
//	 sentinel-bbr    1x         95         92          97%  21.7ms   28.6ms          1.2x        3%         0%      -     21.0ms
//	         none    2x        190          5           5%    >=1s     >=1s       >=41.1x        0%        97%      -     21.0ms
//	     adaptive    2x        190         94          99%  40.2ms   74.9ms          3.1x       50%         0%      4     21.0ms
//	       system    2x        190         91          96%  23.7ms   45.7ms          1.9x       52%         0%      2     21.0ms
//	system-always    2x        190         94          99%  23.3ms   49.9ms          2.0x       51%         0%      2     21.0ms
//	 sentinel-bbr    2x        190         95         100%  23.5ms   50.3ms          2.1x       50%         0%      -     21.0ms
//	         none    5x        475          2           2%    >=1s     >=1s       >=41.1x        0%       100%      -     21.0ms
//	     adaptive    5x        475         92          97%  35.7ms   63.0ms          2.6x       81%         0%      3     21.0ms
//	       system    5x        475         93          98%  23.0ms   49.7ms          2.0x       80%         0%      2     21.0ms
//	system-always    5x        475         93          98%  23.0ms   46.8ms          1.9x       80%         0%      2     21.0ms
//	 sentinel-bbr    5x        475         93          98%  23.1ms   49.0ms          2.0x       80%         0%      -     21.0ms
//	         none   10x        950          0           0%    >=1s     >=1s       >=41.1x        0%       100%      -     21.0ms
//	     adaptive   10x        950         93          98%  38.1ms   69.4ms          2.9x       90%         0%      4     21.0ms
//	       system   10x        950         90          95%  23.2ms   47.2ms          1.9x       90%         0%      2     21.0ms
//	system-always   10x        950         90          95%  23.7ms   51.5ms          2.1x       91%         0%      2     21.0ms
//	 sentinel-bbr   10x        950         90          95%  23.1ms   48.0ms          2.0x       90%         0%      -     21.0ms
//
// On a host whose other processes take most of the CPUs (19:36 UTC, load
// average 3.6-9.7, the server process using 0.2-0.6 of its 2), sluice's
// system rule, whose bound applies while the process's own CPU is over
// 0.8, never bounded, and its queue grew until requests timed out, as
// none's did; with its bound always on (system-always) it served 47-96%
// of that host's capacity, Sentinel's rule (it read its CPU at 46-140,
// in percent, against 0.8: always on too) 64-80%, the adaptive rule
// 42-70%.
package main
