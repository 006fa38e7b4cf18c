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
//
// Files: main.go (the flags and the figures printed), graph.go (the
// package loaded, its arrows, layers and methods counted). docs/DESIGN.md,
// "The thread as a host", gives its figures for package bot.
package main
