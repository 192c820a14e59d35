package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
)

// TestRollingDeploy: during a rolling deploy, instances of the previous
// release and of this one decide on the same keys. Their scripts differ,
// the stored state does not: decisions alternating between the previous
// release's scripts (copied below as they were) and this release's Take
// hold the limit exactly, and each reads the state the other wrote. A
// misread TAT or window start would admit more (a TAT read as past) or
// fewer.
func TestRollingDeploy(t *testing.T) {
	st, c := newTestStore(t, sharedServer(t))
	ctx := context.Background()
	idle := st.o.idle.Milliseconds()
	for _, alg := range []store.Algorithm{store.TokenBucket, store.SlidingCounter} {
		t.Run(string(alg), func(t *testing.T) {
			// Refills far slower than the test runs.
			lim := store.Limit{Algorithm: alg, Limit: 10, Window: time.Hour}
			key := "rolling/" + string(alg)
			old := func() bool {
				var cmd *redis.Cmd
				if alg == store.SlidingCounter {
					cmd = oldScriptSliding.Run(ctx, c, []string{st.redisKey(key, "sc:"+lim.Window.String())}, int64(lim.Window), idle, lim.Limit, 1)
				} else {
					g := gcraOf(lim)
					cmd = oldScriptGCRA.Run(ctx, c, []string{st.redisKey(key, g.suffix)}, idle, g.cost(1), g.tol(1))
				}
				v, err := ints(cmd.Val(), 3)
				require.NoError(t, err, "%v", cmd.Err())
				return v[0] == 1
			}
			admitted := 0
			for i := range 30 {
				var ok bool
				if i%3 == 0 {
					ok = old()
				} else {
					d, err := st.Take(ctx, key, lim, 1)
					require.NoError(t, err)
					ok = d.OK
				}
				if ok {
					admitted++
				}
				// Each admits while under the limit, whichever wrote last.
				require.Equal(t, i < 10, ok, "decision %d (%s)", i, map[bool]string{true: "previous release", false: "this release"}[i%3 == 0])
			}
			require.Equal(t, 10, admitted, fmt.Sprint(lim))
		})
	}
}

// The previous release's exact scripts, as they were.

const oldLuaLib = `
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

var oldScriptGCRA = redis.NewScript(oldLuaLib + `
local now = clock()
local idle = tonumber(ARGV[1])
local ahead = 0
local us, ns = rd(redis.call('GET', KEYS[1]) or nil)
if us then ahead = math.max((us - now) * 1000 + ns, 0) end
local out, changed = {}, false
for i = 2, #ARGV, 2 do
  local nxt = ahead + tonumber(ARGV[i])
  local over = nxt - tonumber(ARGV[i + 1])
  if over > 0 then
    out[#out + 1], out[#out + 2], out[#out + 3] = 0, ahead, over
  else
    ahead, changed = nxt, true
    out[#out + 1], out[#out + 2], out[#out + 3] = 1, nxt, 0
  end
end
if changed then
  redis.call('SET', KEYS[1], wr(now, ahead), 'PX', int(math.floor(ahead / 1000000) + idle))
end
return out
`)

var oldScriptSliding = redis.NewScript(oldLuaLib + `
local now = clock()
local w, idle = tonumber(ARGV[1]), tonumber(ARGV[2])
local sus, sns, p, c, e = now, 0, 0, 0, 0
local s0, p0, c0 = string.match(redis.call('GET', KEYS[1]) or '', '^(%d+) (%d+) (%d+)$')
local us, ns = rd(s0)
if us then
  e = math.max((now - us) * 1000 - ns, 0)
  if e < w then
    sus, sns, p, c = us, ns, tonumber(p0), tonumber(c0)
  elseif e < 2 * w then
    sus, sns, p, c, e = us, ns + w, tonumber(c0), 0, e - w
  else
    e = 0
  end
end
local out, changed = {}, false
local weighed = p * (w - e) / w
for i = 3, #ARGV, 2 do
  local lim, n = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  local ok = 0
  if weighed + (c + n) <= lim then
    c, changed, ok = c + n, true, 1
  end
  out[#out + 1], out[#out + 2], out[#out + 3], out[#out + 4] = ok, p, c, e
end
if changed then
  redis.call('SET', KEYS[1], wr(sus, sns) .. ' ' .. int(p) .. ' ' .. int(c), 'PX', int(math.floor((2 * w - e) / 1000000) + idle))
end
return out
`)
