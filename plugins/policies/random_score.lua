-- RandomScore: the FGD paper's random-fit baseline: one node drawn uniformly
-- among the feasible ones scores 100, every other 0. PreScore and Score.
--
-- Mirrors random_score.go of hkust-adsl/kubernetes-scheduler-simulator
-- (facts, not code): PreScore draws an index in [0, number of feasible
-- nodes) and keeps that node's name; Score gives it MaxNodeScore.
-- * GPU choice at Reserve: the paper's grid runs Random with OpenGpuShare's
--   "random" (profiles/policy-lab/gpu-random.yaml).
-- * No tie-break argument: one node scores 100, so there is no tie at the top.
-- Deviations: the draw is the scheduler's seeded generator
-- (self.handle:random), not Go's global math/rand, so a seed picks other
-- nodes than the paper's run with that seed. Go's draws could not be
-- replayed here anyway: the simulator's index points into its feasible-node
-- list, which its scheduler fills from 16 parallel filter goroutines in the
-- order they finish, so the node an index names is not fixed by the seed.
local ls = require("luasched")

local P = ls.plugin("RandomScore")

function P:pre_score(state, _, feasible, n)
  if n == 0 then return ls.skip end
  state[self.name] = feasible[self.handle:random(n)].node.name
  return nil
end

function P:score(state, _, node)
  return node.node.name == state[self.name] and ls.MAX_NODE_SCORE or ls.MIN_NODE_SCORE
end

return P
