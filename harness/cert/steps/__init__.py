"""Step definitions for the pytest-bdd bindings, one module per area, each with that area's Given, When and Then
steps; the xocdia pytest plugin (:mod:`harness.cert.plugin`) registers every module of :data:`STEP_MODULES`.
Step parameters are typed by the kinds of :mod:`harness.cert.steps.params`."""

#: The step modules, one per area, in the order ``docs/steps.md`` lists them.
STEP_MODULES: tuple[str, ...] = (
    "harness.cert.steps.players",  # the players, their balances and connections
    "harness.cert.steps.table",  # the faces and incidents scripted at the table, and what the table did
    "harness.cert.steps.configuration",  # the table configuration a scenario declares or follows
    "harness.cert.steps.rounds",  # a round's life, the supervisor's actions, how the server ended each round
    "harness.cert.steps.bets",  # placing bets, refusals, retries and reused client bet ids
    "harness.cert.steps.money",  # returns, results, balances, the bet record, refunds, atomic settlement
    "harness.cert.steps.oracle",  # the judge's verdict on the whole scenario
    "harness.cert.steps.corrections",  # the supervisor's corrections of a settled round
    "harness.cert.steps.server",  # the server killed and restarted, crash points in its ledger writes
    "harness.cert.steps.access",  # requests under chosen credentials: who may do what (ACC-*)
    "harness.cert.steps.reports",  # the table's own device reports lost, late or sent again
    "harness.cert.steps.devices",  # forged, replayed and noisy frames on the device lines
    "harness.cert.steps.camera",  # the result camera's confidence in each token, against the line's threshold
    "harness.cert.steps.explore",  # generative certification (features/exploration.feature)
    "harness.cert.steps.faults",  # fault schedules (features/faults/)
    "harness.cert.steps.stats",  # the game's mathematics and the fairness audit (features/rtp, fairness)
    "harness.cert.steps.documents",  # the rules documents audit and how amounts are written (DOC-*)
)
