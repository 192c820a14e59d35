module github.com/sluicekit/sluice/examples/overload/sentinel

go 1.26.0

require (
	github.com/alibaba/sentinel-golang v1.0.4
	github.com/sluicekit/sluice/examples v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/StackExchange/wmi v0.0.0-20190523213315-cbe66965904d // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-ole/go-ole v1.2.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/shirou/gopsutil/v3 v3.21.6 // indirect
	github.com/sluicekit/sluice v0.1.0 // indirect
	github.com/tklauser/go-sysconf v0.3.6 // indirect
	github.com/tklauser/numcpus v0.2.2 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.48.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v2 v2.3.0 // indirect
)

replace (
	github.com/sluicekit/sluice => ../../..
	github.com/sluicekit/sluice/adapters/echo => ../../../adapters/echo
	github.com/sluicekit/sluice/adapters/gin => ../../../adapters/gin
	github.com/sluicekit/sluice/adapters/grpc => ../../../adapters/grpc
	github.com/sluicekit/sluice/core/prometheus => ../../../core/prometheus
	github.com/sluicekit/sluice/core/store/redisstore => ../../../core/store/redisstore
	github.com/sluicekit/sluice/examples => ../..
	github.com/sluicekit/sluice/examples/grpc/greeterpb => ../../grpc/greeterpb
)
