package resname_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/resname"
)

func ExampleCanonical() {
	for _, res := range []string{"get  /users/:id", "/files/*path", "checkout", "GET /a/**"} {
		c, err := resname.Canonical(res)
		fmt.Printf("%q %v\n", c, err)
	}
	// Output:
	// "GET /users/{id}" <nil>
	// "/files/{path...}" <nil>
	// "checkout" <nil>
	// "" uses the glob syntax "**", which sluice does not support (a glob has only '*'), got "GET /a/**"; write "GET /a/*"
}
