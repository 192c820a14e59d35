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
// 2026-11-28, 19:36-19:40 UTC, run.sh with its flags (the command above),
// on this project's 2-vCPU VM shared with five other sessions' builds and
// tests: load average 3.6 at the start, 9.7 at the end. The capacity
// measured 54 requests/s (93-94 on the idle VM), unloaded p50 34.4ms,
// p99 262.0ms:
//
//	   protection  load  offered/s  goodput/s  of capacity      p50      p99  p99/unloaded  rejected  timed out  limit  sched p99
//	         none    1x         54         54         100%   76.4ms  646.8ms          2.5x        0%         0%      -     21.0ms
//	     adaptive    1x         54         38          70%  104.1ms  402.0ms          1.5x       30%         0%      5     41.9ms
//	       system    1x         54          1           1%     >=1s     >=1s        >=3.8x        0%        99%      -     21.0ms
//	system-always    1x         54         26          47%   22.9ms   64.2ms          0.2x       53%         0%      1     25.2ms
//	 sentinel-bbr    1x         54         34          64%   49.2ms  259.4ms          1.0x       36%         0%      -     58.7ms
//	         none    2x        108          3           6%     >=1s     >=1s        >=3.8x        0%        97%      -     21.0ms
//	     adaptive    2x        108         23          42%   76.8ms  478.9ms          1.8x       79%         0%      2     50.3ms
//	       system    2x        108          1           1%     >=1s     >=1s        >=3.8x        0%        99%      -     29.4ms
//	system-always    2x        108         32          60%   21.1ms   55.6ms          0.2x       70%         0%      1     33.6ms
//	 sentinel-bbr    2x        108         38          70%   45.2ms  161.3ms          0.6x       65%         0%      -     41.9ms
//	         none    5x        270          1           2%     >=1s     >=1s        >=3.8x        0%       100%      -     25.2ms
//	     adaptive    5x        270         28          51%   66.1ms  723.9ms          2.8x       90%         0%      2    134.2ms
//	       system    5x        270          1           1%     >=1s     >=1s        >=3.8x        0%       100%      -     29.4ms
//	system-always    5x        270         39          72%   44.5ms  169.1ms          0.6x       86%         0%      2     29.4ms
//	 sentinel-bbr    5x        270         43          80%   41.9ms  181.8ms          0.7x       84%         0%      -     25.2ms
//	         none   10x        540          2           4%     >=1s     >=1s        >=3.8x        0%       100%      -     41.9ms
//	     adaptive   10x        540         33          62%  114.8ms  632.7ms          2.4x       94%         0%      4     33.6ms
//	       system   10x        540          1           3%     >=1s     >=1s        >=3.8x        0%       100%      -     33.6ms
//	system-always   10x        540         52          96%   44.0ms  101.8ms          0.4x       90%         0%      2     29.4ms
//	 sentinel-bbr   10x        540         39          72%   45.5ms  466.7ms          1.8x       93%         0%      -     41.9ms
//
// A measurement of that host, not of the protections on an idle one
// (examples/overload's doc has those): the other processes took most of
// the CPUs, the server process used 0.2-0.6 of its 2 (the trace lines;
// at most 0.74 over a second in the system rows), so sluice's system
// rule, whose bound applies while the process's own CPU is over 0.8,
// never bounded: its queue grew until requests timed out, as none's did
// from 2x on (none kept up at 1x, the edge of a capacity that moved with
// the host). With
// its bound always on (system-always) it served 47-96% of that capacity
// with the lowest p99s; Sentinel's rule, in that state as well (it read
// its CPU at 46-140, against 0.8), 64-80%; the adaptive rule 42-70%, with
// a limit of 2-5. The trace of Sentinel's row at 10x:
//
//	trace sentinel-bbr   540/s: process CPU 0.40 of GOMAXPROCS 2 (per second 0.439 [0.181..0.564]), machine busy 1.00;
//	    Sentinel reads: cpu 96.5 [62.9..128], load1 9.29 [9.29..9.74], in flight 2 [0..2], minRt ms 21 [20..38], maxComplete/s 48 [8..64], bound maxComplete*minRt/1000 1.05 [0.176..1.55]
//
// The short run, 19:34 UTC, load average 3.0 at the start and 7.3 at
// the end (capacity 36/s; over 100% of it at 2x: the other processes
// left more of the CPUs than while it was measured):
//
//	go -C examples/overload/sentinel run . -backend cpu -service 20ms -load 1,2 -duration 3s -warmup 2s -slowdown=false -priority=false -protect none,adaptive,system,system-always,sentinel-bbr,sentinel-load
//
//	     protection  load  offered/s  goodput/s  of capacity     p50      p99  p99/unloaded  rejected  timed out  limit  sched p99
//	           none    1x         35         35         100%  64.8ms  175.1ms          1.9x        0%         0%      -     50.3ms
//	       adaptive    1x         35         35         100%  22.2ms   70.5ms          0.8x        0%         0%     19     29.4ms
//	         system    1x         35         35         100%  21.7ms   26.9ms          0.3x        0%         0%      -      6.3ms
//	  system-always    1x         35         27          75%  21.5ms   72.4ms          0.8x       25%         0%      1      8.4ms
//	   sentinel-bbr    1x         35         34          95%  26.6ms  175.1ms          1.9x        5%         0%      -     29.4ms
//	  sentinel-load    1x         35         35         100%  59.3ms  196.8ms          2.2x        0%         0%      -     21.0ms
//	           none    2x         71          6          18%    >=1s     >=1s       >=11.1x        0%        91%      -     29.4ms
//	       adaptive    2x         71         35          99%  93.2ms  402.9ms          4.5x       51%         0%      4     41.9ms
//	         system    2x         71          1           4%    >=1s     >=1s       >=11.1x        0%        98%      -     50.3ms
//	  system-always    2x         71         45         128%  44.9ms  449.5ms          5.0x       36%         0%      2    167.8ms
//	   sentinel-bbr    2x         71         40         114%  39.1ms  205.6ms          2.3x       43%         0%      -     41.9ms
//	  sentinel-load    2x         71         10          29%    >=1s     >=1s       >=23.0x       62%        23%      -     50.3ms
package main
