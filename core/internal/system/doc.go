// Package system is the engine of core's system rules (kind system): the
// limiter of one rule, which decides on the rule's own statistics of the
// requests it admits (in flight, pass rate, response times) and on a host
// signal (CPU usage, load average) that a Sampler reads off the request
// path, from a Source: Host reads the machine's or the container's.
//
// The CPU usage Host reads is the service's own (see core.SignalCPU for
// why). Host finds, once, the CPU quota that binds the process: the
// smallest set on its cgroup or any parent up to the root of the hierarchy
// it sees, in cgroup v2 (cpu.max) and v1 (cpu.cfs_quota_us over
// cpu.cfs_period_us), the hierarchies located through /proc/self/cgroup and
// /proc/self/mountinfo. With one, the usage is that cgroup's (v2 cpu.stat
// usage_usec, v1 cpuacct.usage) over the quota, or over GOMAXPROCS when
// fewer; a quota on a parent is shared with the parent's other cgroups,
// whose use counts, as it does towards the throttling. With none (no
// cgroup, "max", -1), the usage is the process's own CPU time, user and
// system (/proc/self/stat), over GOMAXPROCS. A quota set above the cgroup
// namespace a container sees is not visible to it.
// TestHostCPUOfTheBindingQuota and TestHostCPUWithoutQuotaIsTheProcesssOwn
// read each case from a fake tree; go test ./core/internal/system/ runs
// them.
//
// The BBR check (strategy bbr) is described, with what it guarantees, its
// figures and tests, by core.StrategyBBR's doc; on a real CPU-bound
// backend, by examples/overload's. Completions, there and in rt's bound,
// are of requests served, not ended with a context's error (core's
// Entry.Exit; TestSystemRuleBBRCountsOnlyServedRequests).
//
// It is internal to sluice: users write rules of kind system (core.Rule's
// Signal, Threshold and Strategy fields) and give a Guard their own source
// with core.WithSystemSource.
package system
