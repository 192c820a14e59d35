package hotspot

import "github.com/sluicekit/sluice/core/internal/flow"

// maxGaps bounds the gaps a shard remembers: 256 of 40 bytes, allocated as
// they are given back. A gap given back when the shard's are all live is
// forgotten, which only makes later requests wait longer.
const maxGaps = 256

// decideGaps is flow.GCRA.DecideAt for record i of s, whose TAT *t is
// ahead of now and which has gaps (flow.Holes.Take): a gap, else the TAT,
// with the sooner retry hint.
func (s *shard) decideGaps(d *Decision, b *flow.GCRA, i int32, t *flow.Instant, now, n int64) {
	taken, retry, left := s.gaps.Take(&d.Decision, b, i, *t, now, n)
	s.recs[i].gaps = uint16(left)
	if !taken {
		*t = b.DecideAt(&d.Decision, *t, now, n)
		if retry >= 0 {
			d.RetryAfter = min(d.RetryAfter, retry)
		}
	}
}

// dropGaps forgets the gaps of record i.
func (s *shard) dropGaps(i int32) {
	s.gaps.Forget(i)
	s.recs[i].gaps = 0
}

// gone counts out a gap of record i that was forgotten.
func (s *shard) gone(i int32) { s.recs[i].gaps-- }
