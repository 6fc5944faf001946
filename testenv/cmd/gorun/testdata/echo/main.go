// Command echo prints its arguments and exits with the status given by the first one.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	fmt.Println(os.Args[1:])
	code, _ := strconv.Atoi(os.Args[1])
	os.Exit(code)
}
