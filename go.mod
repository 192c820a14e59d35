module github.com/sluicekit/sluice

go 1.26.0

require (
	github.com/dunglas/httpsfv v1.1.2
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
)

require golang.org/x/text v0.34.0 // indirect
