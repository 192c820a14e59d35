package redisstore

import (
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Times in the scripts are integer nanoseconds on Redis's clock (TIME). Lua
// numbers are doubles, exact only up to 2^53, and nanoseconds since 1970 do
// not fit: absolute times are kept as decimal strings of nanoseconds, split
// into microseconds (exact: about 2^51 today) and the nanoseconds below them,
// and all arithmetic is done on differences from now, which are small. Costs,
// tolerances and windows are computed in Go with 128-bit products and passed
// as integers, so nothing is rounded in Lua but the sliding counter's
// weighted estimate, which the memory store computes in float64 too.
const luaLib = `
local function rd(s)
  if not s then return nil end
  local l = #s
  if l <= 3 then
    local v = tonumber(s)
    if not v then return nil end
    return 0, v
  end
  local us, ns = tonumber(string.sub(s, 1, l - 3)), tonumber(string.sub(s, l - 2))
  if not us or not ns then return nil end
  return us, ns
end
local function wr(us, ns)
  us = us + math.floor(ns / 1000)
  ns = ns % 1000
  return string.format('%d%03d', us, ns)
end
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function int(x)
  return string.format('%d', x)
end
`

// luaNow reads Redis's clock as whole seconds (s) and the nanoseconds
// within the second (u). Times are read as seconds and nanoseconds within
// them (see luaSplit), so that every number in the scripts is small and
// exact, and differences are computed without a product of two large ones.
const luaNow = `
local t = redis.call('TIME')
local s, u = t[1] + 0, t[2] * 1000
`

// luaSplit reads the decimal string of nanoseconds v as whole seconds vs
// (0 when v has 9 digits or fewer, or they are not a number) and
// nanoseconds vn (nil when its last 9 characters are not a number).
const luaSplit = `
local vs, vn = tonumber(string.sub(v, 1, -10)) or 0, tonumber(string.sub(v, -9))
`

// newScriptGCRA returns the script that decides requests of a token or
// leaky bucket, in order, as GCRA, for a Store whose keys expire idle after
// their state stops mattering (the idle expiry is part of the script: one
// argument fewer to send and convert). KEYS[1] holds the TAT (theoretical
// arrival time), KEYS[2] the cost of one request it was written at,
// written with it, to expire with it: a TAT written at another cost (the
// limit or window was reloaded) is first converted to as many requests
// owed at this one, as the memory store does (flow.Reload); without a cost
// it is taken as written at this one.
// The TAT keeps its own format, which the previous release reads. ARGV:
// the cost of one request, then for each request its cost and tolerance in
// nanoseconds. Each request's answer is one integer: TAT-now after the
// decision (>= 0) when admitted, else -1 minus TAT-now before it (< 0).
// One request is answered by an integer, more by an array.
// Concurrent requests of one key share one call: one TIME, one read, one
// write. Converting strings is most of the script's own work in
// redis-server (strtod, about 700 instructions a number; sprintf), so it
// converts each number once, by arithmetic rather than a tonumber call,
// reads the TAT as two substrings and writes it with one format.
func newScriptGCRA(idle time.Duration) *redis.Script {
	return redis.NewScript(luaNow + `
local ahead = 0
local v = redis.call('GET', KEYS[1])
if v then` + luaSplit + `
  if vn then
    ahead = (vs - s) * 1000000000 + (vn - u)
    if ahead < 0 then ahead = 0 end
  end
end
local k = false
if ahead > 0 then
  k = redis.call('GET', KEYS[2])
  if k and k ~= ARGV[1] then
    local k0 = tonumber(k)
    if k0 and k0 > 0 then ahead = math.ceil(ahead / k0 * ARGV[1]) end
  end
end
local out
if #ARGV == 3 then
  out = ahead + ARGV[2]
  if out - ARGV[3] > 0 then return -ahead - 1 end
  ahead = out
else
  local last = -1
  out = {}
  for i = 2, #ARGV, 2 do
    local nxt = ahead + ARGV[i]
    if nxt - ARGV[i + 1] > 0 then
      out[i / 2] = -ahead - 1
    else
      ahead, last = nxt, nxt
      out[i / 2] = nxt
    end
  end
  if last < 0 then return out end
end
local x = u + ahead
local xn = x % 1000000000
local ttl = string.format('%d', math.floor(ahead / 1000000) + ` + strconv.FormatInt(idle.Milliseconds(), 10) + `)
redis.call('SET', KEYS[1], string.format('%d%09d', s + (x - xn) / 1000000000, xn), 'PX', ttl)
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
return out
`)
}

// scriptUndoGCRA gives cost nanoseconds (ARGV[1]) back to the TAT in
// KEYS[1], keeping its expiry. It returns 1 when there was a TAT.
var scriptUndoGCRA = redis.NewScript(luaLib + `
local us, ns = rd(redis.call('GET', KEYS[1]) or nil)
if not us then return 0 end
redis.call('SET', KEYS[1], wr(us, ns - tonumber(ARGV[1])), 'KEEPTTL')
return 1
`)

// scriptSliding decides requests of a sliding counter, in order. KEYS[1]
// holds "S P C": S the start of the current window (nanoseconds), P the
// previous window's count, C the current window's. Windows start at the
// first request and follow each other. KEYS[2] holds the window (ns) the
// state of the limit was last written in, under KEYS[1] or another
// window's key, written when a window starts, to expire a window after
// the state would: when it names another window and KEYS[1] is empty, the
// script answers {2, that window, 0, 0} for each request, and is called
// again with that window's key as KEYS[3], whose counts it carries into
// KEYS[1] as the memory store does (flow.Reload): each count at the last
// nanosecond of its old window, the new current window ending where the old
// one did, and deletes KEYS[3] (a window changed back finds its old key
// gone, not what it held before the change). When KEYS[2] is "a" (the
// counts are approximate mode's) and KEYS[1] is empty, it answers {3, 0,
// 0, 0} for each request: scriptSlidingFromApprox moves them, and the
// script is called again. ARGV: window in nanoseconds,
// idle expiry in milliseconds, then for each request its limit and n. It
// returns for each request {ok, p, c, e}: the counts after the decision and
// the time elapsed in the current window.
var scriptSliding = redis.NewScript(luaNow + `
local w = tonumber(ARGV[1])
local ss, sn, p, c, e = s, u, 0, 0, 0
local out, changed, carried = {}, false, false
local v = redis.call('GET', KEYS[1])
local w0 = w
if not v then
  local m = redis.call('GET', KEYS[2])
  if m == 'a' then
    for i = 3, #ARGV, 2 do
      out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = 3, 0, 0, 0
    end
    return out
  end
  w0 = tonumber(m or ARGV[1]) or w
  if w0 ~= w and w0 > 0 then
    if not KEYS[3] then
      for i = 3, #ARGV, 2 do
        out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = 2, w0, 0, 0
      end
      return out
    end
    v = redis.call('GET', KEYS[3])
    changed, carried = true, true
  else
    w0 = w
  end
end
local p0, c0
if v then v, p0, c0 = string.match(v, '^(%d+) (%d+) (%d+)$') end
local moved = true
if v then` + luaSplit + `
  e = (s - vs) * 1000000000 + (u - vn)
  if e < 0 then e = 0 end
  if e < w0 then
    ss, sn, p, c, moved = vs, vn, tonumber(p0), tonumber(c0), changed
  elseif e < 2 * w0 then
    ss, sn, p, c, e = vs, vn + w0, tonumber(c0), 0, e - w0
  else
    e = 0
  end
  if w0 ~= w and (p > 0 or c > 0) then
    local d = w0 - w
    sn, e = sn + d, e - d
    if d < 0 then
      p, c = 0, c + p
    elseif w0 >= 2 * w then
      p = 0
    end
  end
end
local ew = e
if ew < 0 then ew = 0 end
local weighed = p * (w - ew) / w
for i = 3, #ARGV, 2 do
  local lim, n = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local ok = 0
  if weighed + (c + n) <= lim then
    c, changed, ok = c + n, true, 1
  end
  out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = ok, p, c, ew
end
if changed then
  local xn = sn % 1000000000
  local ttl = string.format('%d', math.floor((2 * w - e) / 1000000) + tonumber(ARGV[2]))
  redis.call('SET', KEYS[1], string.format('%d%09d %d %d', ss + (sn - xn) / 1000000000, xn, p, c), 'PX', ttl)
  if moved then
    redis.call('SET', KEYS[2], ARGV[1], 'PX', string.format('%d', math.floor((3 * w - e) / 1000000) + tonumber(ARGV[2])))
  end
  if carried then redis.call('DEL', KEYS[3]) end
end
return out
`)

// scriptSlidingFromApprox moves the counts of an approximate sliding
// counter (KEYS[3] and KEYS[4], its current and previous windows, of all
// instances) to the exact state (KEYS[1]) when that is empty and the marker
// (KEYS[2]) says the counts are approximate mode's (the rule was
// approximate): the exact window starts where the approximate one did
// (ARGV[1], ns since 1970), with its counts; the approximate counts are
// taken off theirs, so that a change back to approximate mode carries them
// once. ARGV: that start, the window (ns), the idle expiry (ms). It
// returns 1 when it moved them.
var scriptSlidingFromApprox = redis.NewScript(luaNow + `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('GET', KEYS[2]) ~= 'a' then return 0 end
local c = math.max(tonumber(redis.call('GET', KEYS[3]) or '0') or 0, 0)
local p = math.max(tonumber(redis.call('GET', KEYS[4]) or '0') or 0, 0)
local v, w, idle = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])` + luaSplit + `
local e = math.max((s - vs) * 1000000000 + (u - (vn or u)), 0)
redis.call('SET', KEYS[1], string.format('%s %d %d', v, p, c), 'PX', string.format('%d', math.floor(math.max(2 * w - e, 0) / 1000000) + idle))
redis.call('SET', KEYS[2], ARGV[2], 'PX', string.format('%d', math.floor(math.max(3 * w - e, 0) / 1000000) + idle))
if c > 0 then redis.call('DECRBY', KEYS[3], string.format('%d', c)) end
if p > 0 then redis.call('DECRBY', KEYS[4], string.format('%d', p)) end
return 1
`)

// scriptUndoSliding gives n (ARGV[1]) back to the sliding counter in
// KEYS[1]: to the current window, or the previous one when the window moved
// on since.
var scriptUndoSliding = redis.NewScript(luaLib + `
local n = tonumber(ARGV[1])
local s0, p0, c0 = string.match(redis.call('GET', KEYS[1]) or '', '^(%d+) (%d+) (%d+)$')
local p, c = tonumber(p0), tonumber(c0)
if not c then return 0 end
if c >= n then c = c - n elseif p >= n then p = p - n else return 0 end
redis.call('SET', KEYS[1], s0 .. ' ' .. int(p) .. ' ' .. int(c), 'KEEPTTL')
return 1
`)

// scriptTime returns Redis's clock: {seconds, microseconds}.
var scriptTime = redis.NewScript(`
local t = redis.call('TIME')
return {t[1], t[2]}
`)

// scriptAlive reports whether a Store's marker (KEYS[1]) was still in
// Redis, 1 or 0, and sets it again for ARGV[1] milliseconds: a Redis that
// lost its data lost the marker with it (see syncOnce).
var scriptAlive = redis.NewScript(`
local had = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return had
`)

// scriptApproxSliding pushes an instance entry's counts of the current
// window (KEYS[1], the count of all instances) and the previous one
// (KEYS[2]), and returns both global counts and the entry's counts Redis
// holds: {current, previous, the entry's current, the entry's previous}.
// Pushes are idempotent: each sends the entry's running total of a window,
// and a hash per window (KEYS[3], KEYS[4]) records, under the entry's id,
// the total counted and the push's sequence number; a push adds the
// difference from the recorded total, and one older than the record (a
// repeat, or a late push of a concurrent sync) adds nothing. A lost reply
// is then repeated safely. ARGV: the entry's id, the push's sequence
// number, the two totals, the keys' expiries in milliseconds. A window
// without a record and a total of 0 is only read. KEYS[5], the limit's
// marker of the window last written (scriptSliding), is set to "a": the
// counts are approximate mode's (scriptSlidingFromApprox). An entry's first
// exchange also names the exact state of its window (KEYS[6]), the window
// (ARGV[7], ns) and the start of the current window (ARGV[8], ns since
// 1970): when the marker names that window (the rule was exact), the exact
// counts move to the approximate ones, each at the last nanosecond of its
// exact window (as a change of window carries them), in the current window
// if that is later, and the exact state is deleted.
var scriptApproxSliding = redis.NewScript(luaLib + `
if KEYS[6] and redis.call('GET', KEYS[5]) == ARGV[7] then
  local v, p0, c0 = string.match(redis.call('GET', KEYS[6]) or '', '^(%d+) (%d+) (%d+)$')
  if v then
    local w, a = tonumber(ARGV[7]), ARGV[8]
    local d = ((tonumber(string.sub(v, 1, -10)) or 0) - (tonumber(string.sub(a, 1, -10)) or 0)) * 1000000000 +
      ((tonumber(string.sub(v, -9)) or 0) - (tonumber(string.sub(a, -9)) or 0))
    for _, x in ipairs({{d + w - 1, tonumber(c0)}, {d - 1, tonumber(p0)}}) do
      local k, ttl = KEYS[1], ARGV[5]
      if x[1] < 0 then k, ttl = KEYS[2], ARGV[6] end
      if x[1] >= -w and x[2] > 0 then
        redis.call('INCRBY', k, int(x[2]))
        redis.call('PEXPIRE', k, ttl)
      end
    end
    redis.call('DEL', KEYS[6])
  end
end
redis.call('SET', KEYS[5], 'a', 'PX', ARGV[5])
local id, seq = ARGV[1], tonumber(ARGV[2])
local function push(k, rk, total, ttl)
  total = tonumber(total)
  local rs, rt = 0, 0
  local rec = redis.call('HGET', rk, id)
  if rec then
    local a, b = string.match(rec, '^(%d+) (%d+)$')
    rs, rt = tonumber(a) or 0, tonumber(b) or 0
  end
  if seq > rs and (rec or total ~= 0) then
    if total ~= rt then
      redis.call('INCRBY', k, int(total - rt))
      redis.call('PEXPIRE', k, ttl)
    end
    redis.call('HSET', rk, id, ARGV[2] .. ' ' .. int(total))
    redis.call('PEXPIRE', rk, ttl)
    rt = total
  end
  return tonumber(redis.call('GET', k) or '0') or 0, rt
end
local c, mc = push(KEYS[1], KEYS[3], ARGV[3], ARGV[5])
local p, mp = push(KEYS[2], KEYS[4], ARGV[4], ARGV[6])
return {c, p, mc, mp}
`)

// scriptApproxSlidingUndo takes n (ARGV[1]) off the count of a window
// (KEYS[1]), keeping its expiry, when it holds that many.
var scriptApproxSlidingUndo = redis.NewScript(`
local n = tonumber(ARGV[1])
if (tonumber(redis.call('GET', KEYS[1]) or '0') or 0) < n then return 0 end
redis.call('DECRBY', KEYS[1], ARGV[1])
return 1
`)

// scriptApproxSlidingTake decides an approximate sliding counter in Redis,
// for a key the instance does not track: KEYS[1] and KEYS[2] are the
// current and previous windows' counters. ARGV: n, limit, window and the
// time elapsed in the current window (nanoseconds, on the instance's view of
// Redis's clock), the current counter's expiry in milliseconds. It returns
// {ok, p, c} with the counts after the decision.
var scriptApproxSlidingTake = redis.NewScript(luaLib + `
local n, lim, w, e = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local c = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local p = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if p * (w - e) / w + (c + n) > lim then return {0, p, c} end
c = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return {1, p, c}
`)

// scriptApproxGCRA merges an instance entry's view of a bucket into the TAT
// in KEYS[1]: the TAT becomes the later of the stored TAT plus the cost the
// entry admitted since the cost Redis counted of it, and the entry's own
// TAT. Pushes are idempotent: each sends the entry's running total of cost
// (nanoseconds), and KEYS[2], the entry's record, holds the push's sequence
// number and the total counted; a push older than the record adds nothing,
// and without a record (a new entry, or one expired with its bucket) the
// total confirmed before (ARGV[3]) is taken as counted. ARGV: sequence
// number, total, total confirmed, the entry's TAT in nanoseconds, idle
// expiry in milliseconds, the cost of one request. KEYS[3] holds the cost
// of one request the stored TAT was written at, which it converts as
// newScriptGCRA does. It returns {TAT, the entry's total counted}, both as
// decimal strings of nanoseconds.
var scriptApproxGCRA = redis.NewScript(luaLib + `
local now = clock()
local seq, idle = tonumber(ARGV[1]), tonumber(ARGV[5])
local rs, rt = 0, ARGV[3]
local rec = redis.call('GET', KEYS[2])
if rec then
  local a, b = string.match(rec, '^(%d+) (%d+)$')
  if a then rs, rt = tonumber(a), b end
end
local fresh = seq > rs
local delta = 0
if fresh then
  local tus, tns = rd(ARGV[2])
  local cus, cns = rd(rt)
  delta = (tus - cus) * 1000 + (tns - cns)
  rt = ARGV[2]
end
local lus, lns = rd(ARGV[4])
if not lus then lus, lns = 0, 0 end
local rus, rns = lus, lns
local g = redis.call('GET', KEYS[1])
local gus, gns = rd(g or nil)
local k = redis.call('GET', KEYS[3])
if gus and k and k ~= ARGV[6] then
  k = tonumber(k)
  local ga = (gus - now) * 1000 + gns
  if k and k > 0 and ga > 0 then gus, gns = now, math.ceil(ga / k * ARGV[6]) end
end
if gus and (gus - lus) * 1000 + (gns - lns) + delta > 0 then rus, rns = gus, gns + delta end
local out = wr(rus, rns)
local ahead = (rus - now) * 1000 + rns
local ttl = int(math.floor(math.max(ahead, 0) / 1000000) + idle)
if ahead > 0 and out ~= g then
  redis.call('SET', KEYS[1], out, 'PX', ttl)
  redis.call('SET', KEYS[3], ARGV[6], 'PX', ttl)
end
if fresh then
  redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. rt, 'PX', ttl)
end
return {out, rt}
`)
