// Package extract is the implementation of package extractors and the
// per-request machinery the adapters of this repository share:
// HTTPRequestParams and GRPCCallParams (a request's params, Reset for each
// request), HTTPResource (resource names of routes), and the param sources
// of each protocol (HTTPSource, GRPCSource). Package extractors documents
// the behaviour; an adapter converts the *extractors.Extractor it is given
// into this package's, (*extract.Extractor)(x), which costs nothing: the
// public type is defined on this one.
package extract
