// Command filegraph measures how the files of one Go package lean on each
// other: it prints the package's files, the arrows between them (file A
// draws an arrow to file B when A names something B declares: a function,
// method, type, field, variable or constant of the package), how many of
// those arrows run back up, the lines of the root file and the methods of
// one type.
//
// Layers are the files' distance from the root file (the package's entry,
// bot.go for package bot) along the arrows, breadth first: the root is
// layer 0, what it names layer 1, and so on. An arrow runs back up when it
// points to a file of a lower layer than its own: a part reaching back into
// what uses it.
//
//	go run ./bot/internal/filegraph [-root bot.go] [-type worker] [-list] ./bot
//
// It type-checks the package from the export data `go list -export` makes,
// so it reads the package as the compiler does.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
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
	up, side, ups := g.backUp(*root)
	fmt.Fprintf(os.Stdout, "package %s\n", g.path)
	fmt.Fprintf(os.Stdout, "files %d\n", len(g.files))
	fmt.Fprintf(os.Stdout, "arrows %d\n", len(g.arrows))
	fmt.Fprintf(os.Stdout, "arrows back up %d (sideways %d, from layers by distance from %s)\n", up, side, *root)
	fmt.Fprintf(os.Stdout, "%s lines %d\n", *root, g.lines[*root])
	fmt.Fprintf(os.Stdout, "methods of %s %d\n", *typ, g.methods[*typ])
	if *list {
		for _, a := range ups {
			fmt.Fprintf(os.Stdout, "  up: %s -> %s\n", a[0], a[1])
		}
	}
}
