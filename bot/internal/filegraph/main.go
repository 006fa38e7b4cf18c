package main

import (
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"
)

func main() {
	root := flag.String("root", "bot.go", "the package's entry file: layer 0")
	typ := flag.String("type", "worker", "the type whose methods are counted")
	list := flag.Bool("list", false, "list the arrows that run back up")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: filegraph [-root file] [-type name] <package>")
	}
	g, err := load(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	up, side, ups, apart := g.backUp(*root)
	fmt.Fprintf(os.Stdout, "package %s\n", g.path)
	fmt.Fprintf(os.Stdout, "files %d\n", len(g.files))
	fmt.Fprintf(os.Stdout, "arrows %d\n", len(g.arrows))
	fmt.Fprintf(os.Stdout, "arrows back up %d (sideways %d, from layers by distance from %s)\n", up, side, *root)
	for _, f := range slices.Sorted(maps.Keys(apart)) {
		fmt.Fprintf(os.Stdout, "not reached from %s: %s (%d arrows out, not counted)\n", *root, f, apart[f])
	}
	fmt.Fprintf(os.Stdout, "%s lines %d\n", *root, g.lines[*root])
	fmt.Fprintf(os.Stdout, "methods of %s %d\n", *typ, g.methods[*typ])
	if *list {
		for _, a := range ups {
			fmt.Fprintf(os.Stdout, "  up: %s -> %s\n", a[0], a[1])
		}
	}
}
