package gateway_test

import (
	"fmt"

	gateway "github.com/leakbench/leakbench/gateway-under-test"
)

func ExampleParseVariants() {
	set, err := gateway.ParseVariants("held-across-upstream, commit-in-finally")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set, set[gateway.VariantCommitInFinally], set[gateway.VariantFixed])
	_, err = gateway.ParseVariants("fixed,held-while-waiting")
	fmt.Println(err)
	// Output:
	// commit-in-finally,held-across-upstream true false
	// variant "fixed" cannot be combined with leak variants (fixed,held-while-waiting)
}
