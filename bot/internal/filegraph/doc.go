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
// "The thread as a host", gives its figures for package bot: the face's
// issue's, before the face and now.
//
// # Package bot's figures over time
//
// Production files; in order: files, files with worker methods, file
// arrows, arrows running back up, lines of bot.go, methods of worker.
//
//   - the issue's: —, 19, 198, 98, over 500, 110; at 96fbd68 (the commit
//     before the face, the work since the issue was filed included): 38,
//     21, 234, 103, 526, 116.
//   - 848ba88 (the same at f4bf72a): 34, 13, 171, 68, 419, 67.
//   - after issue 26's slash commands (their own thread part,
//     slashpart.go): 37, 13, 181, 70, 406, 67. Between, the view's
//     injected ticker (its type named by bot.go) and the mailroom's
//     interfaces had pulled view.go one layer up and the arrows back up to
//     73; the ticker's type now lives with the deps that carry it, and
//     awaiter where it is used.
//   - 8244ea1 (issues 27, 28): 42, 13, 212, 77, 419, 69. Issue 27 added
//     records.go, restartlines.go, storage.go, didyoumean.go and live.go,
//     their state in parts of the worker rather than methods on it, but
//     the arrows back up rose from 70 to 77, over the aim.
//   - 643863e (issue 29): 44, 14, 225, 79, 422, 71. Issue 29 landed as
//     extensions (bot/scopes, bot/memory, bot/runnerimage) and a leaf
//     (settings); in the kernel it added launch.go (the launch's model,
//     mode and effort) and instructions.go (the Instructor hook's text),
//     two worker methods and two arrows back up.
//   - 1fe6196: 44, 14, 214, 68, 422, 71. Code moved beside its users
//     (turnsText, storageFault, RemoveHome, resolver, the view's asked
//     and textShown); tellUnsettled beside its twin tellInterrupted in
//     recover.go, which nothing in the package calls now: an entry of its
//     own like bot.go, not reached from it, its 6 arrows out not counted
//     (the tool lists such files).
//
// The aims (about 70 methods, bot.go under 500 lines, at most 71
// arrows back up) were met after issue 26.
package main
