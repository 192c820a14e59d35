package redistest

// Unexported names the tests of package redistest_test use.
const (
	EnvAddr    = envAddr
	EnvRequire = envRequire
	Process    = kindProcess
	External   = kindExternal
	Miniredis  = kindMiniredis
)

// StartCluster is startCluster, for the tests of package redistest_test.
var StartCluster = startCluster

// Owned is owned, for the tests of package redistest_test.
func (s *Server) Owned() bool { return s.owned() }

// HasRedisServer is hasRedisServer, for the tests of package redistest_test.
var HasRedisServer = hasRedisServer
