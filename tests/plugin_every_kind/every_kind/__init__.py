"""A plug-in with one object of every kind the workbench registers (a bound, a construction, a
preset and claims, one of them violated), each module importing torch as a user's may. CI
installs it (``.ci/run``) and runs the whole suite, which must pass unchanged: an installed
plug-in never changes what the workbench's own tests check (README, docs/extending.md)."""
