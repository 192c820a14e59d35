package flow

import "math/big"

// Reload is New for the rule of prev reloaded at now, a bucket keeping the
// requests it owes at now (see New; its holes are forgotten, their slots
// kept as taken).
func Reload(cfg Config, prev Limiter, now int64) (Limiter, error) {
	l, err := New(cfg, prev)
	g, ok := l.(*gcra)
	p, _ := prev.(*gcra)
	if err != nil || !ok || p == nil || p.st != g.st || !g.full.Converts(&p.full) {
		return l, err
	}
	s := g.st
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holes.Forget(0)
	s.nholes.Store(0)
	for ns, frac := s.tat.Load(), s.frac; (Instant{ns, frac}).After(at(now)); ns, frac = s.tat.Load(), s.frac {
		next := g.full.Convert(Instant{ns, frac}, max(s.den, 1), now, &p.full)
		if !g.locked {
			next = at(next.Ceil())
		}
		if s.swap(Instant{NS: ns}, next, g.full.denom()) {
			break
		}
	}
	return l, nil
}

// Convert returns TAT t at now of a bucket of prev (only its Limit and
// Window are read), t's fraction in units of 1/fden ns, as the TAT of a
// bucket of p owing as many requests (see New), however many more than p
// holds (up to MaxSpan): t itself when full or when p does not convert prev.
func (p *GCRA) Convert(t Instant, fden, now int64, prev *GCRA) Instant {
	if !t.After(at(now)) || !p.Converts(prev) {
		return t
	}
	d, b, den := t.Minus(at(now), fden), big.NewInt, p.denom()
	n, q := b(d.NS), b(fden)
	n.Mul(n, q).Add(n, b(d.Frac)).Mul(n, b(prev.Limit)).Mul(n, b(int64(p.Window))).Mul(n, b(den))
	q.Mul(q, b(int64(prev.Window))).Mul(q, b(p.Limit))
	n.Add(n, q).Sub(n, b(1)).Quo(n, q) // in units of 1/den, rounded up
	if ns, f := n.QuoRem(n, b(den), q); ns.IsInt64() && ns.Int64() <= int64(MaxSpan) {
		return at(now).Plus(Instant{ns.Int64(), f.Int64()}, den)
	}
	return at(now + int64(MaxSpan)) // saturated: a TAT stays within MaxSpan of now
}

// Converts reports whether a request costs another time (Window/Limit) in
// a bucket of p than in one of prev, both of which admit.
func (p *GCRA) Converts(prev *GCRA) bool {
	return prev.Limit > 0 && p.Limit > 0 && (prev.Limit != p.Limit || prev.Window != p.Window)
}
