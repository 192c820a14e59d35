package main

import "github.com/sluicekit/sluice/examples/overload/engine"

func main() { engine.Program{}.Main() }
