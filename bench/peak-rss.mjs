// Preloaded into a process the bench measures (`node --import ./bench/peak-rss.mjs …`): reports its
// peak resident set size on stderr as it exits.
process.on('exit', () => process.stderr.write(`\npeak-rss ${process.resourceUsage().maxRSS * 1024}\n`));
