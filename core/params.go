package core

// Params gives Enter the values of a request's params, the request values
// hotspot rules limit by (Rule.Param: "header:X-User-ID", "query:tenant",
// "ip", ...). Adapters implement it over their request type. Enter asks only
// for the params a matching hotspot rule names, so a request of a resource
// without hotspot rules reads nothing.
type Params interface {
	// Param returns the i-th value (from 0) of param, and false when the
	// request has no i-th value: a param may carry several values (a
	// repeated header, a comma-separated list), and every one is limited.
	// Rule.OnMissing says what a rule does with a request without its
	// param.
	Param(param string, i int) (string, bool)
}

// ParamMap is a Params holding values in a map, for callers that have them
// at hand and for tests.
type ParamMap map[string][]string

// Param returns the i-th value of param.
func (m ParamMap) Param(param string, i int) (string, bool) {
	vs := m[param]
	if i < 0 || i >= len(vs) {
		return "", false
	}
	return vs[i], true
}

// WithParams makes Enter read the request's params from p for the hotspot
// rules that apply. Enter reads p only while it runs and keeps no reference
// to it once it returns, so a caller may reuse p (from a pool, say) for
// another request afterwards.
func WithParams(p Params) EnterOption { return EnterOption{params: p} }
