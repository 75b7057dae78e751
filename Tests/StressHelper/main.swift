// The reliability tests' helper process; filled in by the reliability suite.
print("stash-stress: no command")
