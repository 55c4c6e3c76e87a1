"""CodeProposerSolver: a proposer writes small programs and inputs, the sandbox runs them, a solver predicts.

Two players take turns over ``rounds`` rounds (default 4). Each round the ``proposer`` proposes a Python
program that reads stdin and prints to stdout, with its input; the sandbox computes the output. Then, by
``mode``:

* ``"output"`` (default, output prediction): the solver sees the program and the input and answers the
  exact output, ``answer(output)``. It may not run code (``run_python`` refuses it): it must read the program.
* ``"induction"`` (program induction): the proposer gives ``inputs`` inputs (default 4); the solver sees the
  first half with their outputs, never the program, and answers with a program, ``answer(code)``, that must
  print the right output for each of the other inputs.

Tools: ``run_python(code, stdin)`` (scratch, the proposer's in both modes, the solver's in ``induction``),
``propose(program, input)`` or ``propose(program, inputs)`` (the proposer's move), ``answer(...)`` (the
solver's move). Calling the other role's final tool counts as your move, judged as an empty one: an
invalid proposal, or a wrong answer.

A proposal is valid if the program is at most ``max_program_chars`` (default 2000) characters, each input
at most 1000, and, run twice on each input in a fresh sandbox within ``cpu_seconds`` (default 1) of CPU
time, it exits normally and prints the same non-empty output of at most ``max_output_chars`` (default 500)
characters both times (so it is deterministic). Outputs are compared line by line with trailing
whitespace ignored (``output``), or token by token (``induction``, as in the stdio judge).

Rewards. The solver gets 1/rounds for each round it solves. The proposer is paid at the end with the
learnability reward of Absolute Zero (Zhao et al., 2025), taken over the episode's valid rounds: with s the
share the solver solved, 1 - s if 0 < s < 1, else 0 (a solver that solves everything, or nothing, says the
programs were trivial, or out of reach). An invalid proposal costs the proposer 1/rounds. So the proposer
is rewarded for programs that are solvable but not trivial for this solver. (A single solver cannot tell
hard from unsolvable per program, as Absolute Zero's several samples can; the rate over the rounds is the
signal.) A player exceeding the invalid-action allowance gets -1, the other 0. Winners: the solver if it
solved every valid round (at least one), the proposer if its learnability reward is positive.

Options: ``rounds`` (2 to 10), ``mode``, ``inputs`` (2 to 8, induction), ``max_program_chars``,
``max_output_chars``, ``cpu_seconds``, ``allow_unsafe`` (as in Code). Outcome details: every round's
program, inputs, validity (and why not), the output's hash, and whether the solver solved it.

Version history: v0, first release.
"""

from __future__ import annotations

import hashlib
from typing import Any

from parlour.envs.coding import judge
from parlour.envs.coding.common import RUN_PYTHON, ScratchSandboxes, bool_option, choice_option, code_tool, float_option, scratch_run
from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, InvalidMove, int_option
from parlour.envs.core.tools import Tool
from parlour.sandbox import Limits

MODES = ("output", "induction")
MAX_INPUT_CHARS = 1000

RULES = {
    "proposer": """You are the proposer in a {rounds}-round programming game. Each round you write a short Python program that reads standard input and prints its result, and {input_words}; the sandbox runs it. {solver_task}
You score at the end: with s the share of valid rounds the solver solved, 1 - s if the solver solved some but not all, otherwise 0. So write programs the solver can work out, but not all of them easily. A program is invalid (and costs you {penalty:g}) if it is longer than {max_program} characters, fails, runs out of time ({cpu:g} s of CPU), prints nothing or more than {max_output} characters, or prints something different when run again.
Tools: run_python(code, stdin) tries a program in a scratch sandbox; {propose_call} is your move.
{syntax}""",
    "solver": """You are the solver in a {rounds}-round programming game. Each round a proposer writes a short Python program that reads standard input; {solver_duty} Each round you solve earns {share:g}.
Tools: {solver_tools}
{syntax}""",
}


def normalize(text: str) -> str:
    """Output as compared: trailing whitespace of each line and trailing empty lines ignored."""
    return "\n".join(line.rstrip() for line in text.rstrip().split("\n")).strip("\n")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class CodeProposerSolver(Game):
    """A proposer writes programs and inputs, the solver predicts outputs or writes the program; see the module docstring."""

    name = "CodeProposerSolver"
    reference_agents = ("tracer", "random")
    description = "A proposer writes small programs and inputs; the solver predicts their output (or writes the program from examples)."
    category = "coding"
    zero_sum = False

    def __init__(
        self,
        *,
        rounds: int = 4,
        mode: str = "output",
        inputs: int = 4,
        max_program_chars: int = 2000,
        max_output_chars: int = 500,
        cpu_seconds: float = 1.0,
        allow_unsafe: bool = False,
    ):
        self.rounds = int_option("rounds", rounds, 2, 10)
        self.mode = choice_option("mode", mode, MODES)
        self.n_inputs = int_option("inputs", inputs, 2, 8)
        self.max_program_chars = int_option("max_program_chars", max_program_chars, 100, 16000)
        self.max_output_chars = int_option("max_output_chars", max_output_chars, 1, 10000)
        self.cpu_seconds = float_option("cpu_seconds", cpu_seconds, 0.1, 5.0)
        self.allow_unsafe = bool_option("allow_unsafe", allow_unsafe)
        self.scratch = ScratchSandboxes(self.allow_unsafe)
        self.players = ["proposer", "solver"]
        if self.mode == "output":
            propose = Tool(
                "propose",
                "Propose a program and the input it reads; the sandbox computes its output. Your move.",
                {
                    "type": "object",
                    "properties": {"program": {"type": "string"}, "input": {"type": "string"}},
                    "required": ["program", "input"],
                    "additionalProperties": False,
                },
                final=True,
            )
            answer = Tool(
                "answer",
                "Answer the exact output the program prints for the input. Your move.",
                {"type": "object", "properties": {"output": {"type": "string"}}, "required": ["output"], "additionalProperties": False},
                final=True,
            )
        else:
            propose = Tool(
                "propose",
                f"Propose a program and {self.n_inputs} inputs; the sandbox computes the outputs. Your move.",
                {
                    "type": "object",
                    "properties": {
                        "program": {"type": "string"},
                        "inputs": {"type": "array", "items": {"type": "string"}, "minItems": self.n_inputs, "maxItems": self.n_inputs},
                    },
                    "required": ["program", "inputs"],
                    "additionalProperties": False,
                },
                final=True,
            )
            answer = code_tool("answer", "Answer with a program that prints the right output for each hidden input. Your move.", final=True)
        self.tools = [RUN_PYTHON, propose, answer]
        self.round = 0
        self.phase = "propose"
        self.current: dict[str, Any] | None = None
        self.history: list[dict[str, Any]] = []

    @property
    def shown(self) -> int:
        """How many of an induction round's input/output pairs the solver sees."""
        return (self.n_inputs + 1) // 2

    # ------------------------------------------------------------------ episode
    def start(self, ctx: Context) -> None:
        """Check that code can run here; round 1 begins with the proposer."""
        judge.require_sandbox(self.name, self.allow_unsafe)
        self.scratch.close()
        self.round = 0
        self.phase = "propose"
        self.current = None
        self.history = []

    def to_move(self) -> list[str]:
        """The proposer, then the solver, each round."""
        return ["proposer" if self.phase == "propose" else "solver"]

    def rules(self, player: str) -> str:
        """The player's role, scoring and tools."""
        if self.mode == "output":
            input_words, propose_call = "the input it reads", "propose(program, input)"
            solver_task = "the solver sees the program and the input and must answer the exact output, without running code."
            solver_tools = "answer(output) is your move (you cannot run code: read the program)."
            answer_call = '{"tool": "answer", "arguments": {"output": "..."}}, or <answer>...</answer>'
        else:
            input_words, propose_call = f"{self.n_inputs} inputs", "propose(program, inputs)"
            solver_task = (
                f"the solver sees {self.shown} of the inputs with their outputs, never the program, and must write a program "
                f"that prints the right output for the other {self.n_inputs - self.shown}."
            )
            solver_tools = "run_python(code, stdin) tries a program in a scratch sandbox; answer(code) is your move."
            answer_call = '{"tool": "answer", "arguments": {"code": "..."}}, or <answer>...</answer>'
        syntax = "Call a tool in your reply: an OpenAI tool call, a JSON object such as " + (
            '{"tool": "propose", "arguments": {...}}, or <tool_call>{"name": "propose", "arguments": {...}}</tool_call>.'
            if player == "proposer"
            else answer_call + "."
        )
        values = dict(
            rounds=self.rounds,
            input_words=input_words,
            solver_task=solver_task[0].upper() + solver_task[1:],
            solver_duty=solver_task,
            penalty=1 / self.rounds,
            max_program=self.max_program_chars,
            cpu=self.cpu_seconds,
            max_output=self.max_output_chars,
            propose_call=propose_call,
            syntax=syntax,
            share=1 / self.rounds,
            solver_tools=solver_tools,
        )
        return RULES[player].format(**values)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The round and what to call (the solver's challenge was relayed when it was proposed)."""
        head = f"Round {self.round + 1} of {self.rounds}."
        if player == "proposer":
            call = "propose(program, input)" if self.mode == "output" else f"propose(program, inputs) with {self.n_inputs} inputs"
            return f"{head} Propose a program: call {call}."
        if self.mode == "output":
            return f"{head} What does the proposer's program print on its input (both shown when it proposed them)? Call answer(output)."
        return f"{head} Write a program that prints what the proposer's hidden program printed for each input shown: call answer(code)."

    def parse(self, player: str, text: str) -> Any:
        """Only tool calls are moves here."""
        move = "propose(...)" if player == "proposer" else "answer(...)"
        raise InvalidMove(f'Reply with a tool call: {move} is your move, for example {{"tool": "{move[:-5]}", "arguments": {{...}}}}.')

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Scratch runs, except for the solver of output prediction, who must read the program."""
        if player == "solver" and self.mode == "output":
            return "run_python is not available to the solver in output prediction: work the output out by reading the program."
        return scratch_run(self.scratch.of(player), arguments["code"], arguments.get("stdin", ""))

    def apply(self, ctx: Context, moves: dict[str, Any]) -> None:
        """Check and run a proposal, or judge an answer; pay the rounds and end after the last."""
        ((player, move),) = moves.items()
        if player == "proposer":
            self._propose(ctx, move)
        else:
            self._answer(ctx, move)
        if self.round == self.rounds:
            self._finish(ctx)

    def _propose(self, ctx: Context, move: dict[str, Any]) -> None:
        arguments = move["arguments"]
        program = arguments.get("program", "") if move["tool"] == "propose" else ""
        inputs = [arguments["input"]] if "input" in arguments else list(arguments.get("inputs", []))
        reason, outputs = self._check(program, inputs) if move["tool"] == "propose" else ("the proposer must call propose", [])
        entry = {
            "round": self.round + 1,
            "program": program,
            "inputs": inputs,
            "valid": reason is None,
            "reason": reason,
            "output_hashes": [_digest(o) for o in outputs],
            "solved": None,
        }
        if reason is not None:
            self.history.append(entry)
            ctx.reward("proposer", -1 / self.rounds)
            # The reason may quote the program's errors, which the proposer wrote: only the proposer is told it.
            ctx.tell(f"Round {self.round + 1}: the proposal is invalid; the round is lost.", kind="move", sender="proposer")
            ctx.tell(f"Your proposal is invalid: {reason}.", to="proposer", kind="feedback")
            self.round += 1
            return
        self.current = {**entry, "outputs": outputs}
        self.phase = "answer"
        ctx.tell(f"Round {self.round + 1}: the proposer has proposed a program.", kind="move", sender="proposer")
        self._show_challenge(ctx)

    def _show_challenge(self, ctx: Context) -> None:
        """Relay to the solver what it may see of the proposal, each piece framed as the proposer's."""
        current = self.current
        assert current is not None
        if self.mode == "output":
            ctx.tell("The proposer's program, then its input, follow.", to="solver")
            ctx.say("proposer", current["program"], to="solver")
            ctx.say("proposer", current["inputs"][0], to="solver")
            return
        ctx.tell(f"{self.shown} input(s) of the proposer's hidden program follow, each with what the program printed on it.", to="solver")
        for text, output in zip(current["inputs"][: self.shown], current["outputs"][: self.shown]):
            ctx.say("proposer", text, to="solver")
            ctx.say("proposer", output, to="solver")

    def _check(self, program: str, inputs: list[str]) -> tuple[str | None, list[str]]:
        """Why a proposal is invalid (None if it is valid), and its outputs."""
        if not program.strip():
            return "the program is empty", []
        if len(program) > self.max_program_chars:
            return f"the program is longer than {self.max_program_chars} characters", []
        if any(len(text) > MAX_INPUT_CHARS for text in inputs):
            return f"an input is longer than {MAX_INPUT_CHARS} characters", []
        limits = Limits(
            cpu_seconds=self.cpu_seconds, wall_seconds=max(5.0, 4 * self.cpu_seconds), memory_mb=256, max_output_bytes=4 * self.max_output_chars + 64
        )
        outputs = []
        with judge.fresh_sandbox(self.allow_unsafe) as sandbox:
            for number, text in enumerate(inputs, 1):
                first, second = (sandbox.run(program, text, limits=limits) for _ in range(2))
                where = f" on input {number}" if len(inputs) > 1 else ""
                if first.verdict != "ok" or second.verdict != "ok":
                    bad = first if first.verdict != "ok" else second
                    tail = bad.stderr.strip().splitlines()[-1:] if bad.stderr.strip() else [bad.verdict]
                    return f"the program {bad.verdict.replace('_', ' ')}{where}: {tail[0][:200]}", []
                if first.stdout != second.stdout:
                    return f"the program printed different outputs when run twice{where}", []
                if not first.stdout.strip():
                    return f"the program printed nothing{where}", []
                if len(first.stdout) > self.max_output_chars:
                    return f"the program printed more than {self.max_output_chars} characters{where}", []
                outputs.append(first.stdout)
        return None, outputs

    def _answer(self, ctx: Context, move: dict[str, Any]) -> None:
        current = self.current
        assert current is not None
        if move["tool"] != "answer":
            solved, said = False, "the solver did not answer"
        elif self.mode == "output":
            solved = normalize(move["arguments"]["output"]) == normalize(current["outputs"][0])
            said = "right" if solved else "wrong"
        else:
            hidden = list(zip(current["inputs"][self.shown :], current["outputs"][self.shown :]))
            with judge.fresh_sandbox(self.allow_unsafe) as sandbox:
                judgement = judge.judge_stdio(sandbox, move["arguments"]["code"], hidden, cpu=self.cpu_seconds)
            solved = judgement.verdict == "pass"
            said = f"{judgement.passed} of {judgement.total} hidden inputs right"
        if solved:
            ctx.reward("solver", 1 / self.rounds)
        expected = current["outputs"][0] if self.mode == "output" else current["outputs"][-1]
        ctx.tell(f"Round {self.round + 1}: the solver's answer is {said}. The proposer's program printed:", kind="move", sender="solver")
        ctx.say("proposer", expected)
        self.history.append({**{k: v for k, v in current.items() if k != "outputs"}, "solved": solved})
        self.current = None
        self.phase = "propose"
        self.round += 1

    def _finish(self, ctx: Context) -> None:
        valid = [entry for entry in self.history if entry["valid"]]
        solved = sum(bool(entry["solved"]) for entry in valid)
        rate = solved / len(valid) if valid else 0.0
        learnability = 1.0 - rate if 0 < rate < 1 else 0.0
        ctx.reward("proposer", learnability)
        winners = ["solver"] if valid and solved == len(valid) else (["proposer"] if learnability > 0 else [])
        self.scratch.close()
        ctx.finish(
            reason=f"{self.rounds} rounds played: the solver solved {solved} of {len(valid)} valid programs",
            winners=winners,
            details=self._details(rate, learnability),
        )

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """Too many replies without a valid tool call: -1 for the offender, 0 for the other."""
        self.scratch.close()
        ctx.finish({player: -1.0, self.other(player): 0.0}, reason=reason, winners=[self.other(player)], details=self._details(None, None))

    def _details(self, rate: float | None, learnability: float | None) -> dict[str, Any]:
        return {"mode": self.mode, "rounds": [dict(entry) for entry in self.history], "solve_rate": rate, "learnability": learnability}

    # ------------------------------------------------------------------ views
    def view(self, player: str) -> dict[str, Any]:
        """The round, the player's role and the rounds so far; the solver also sees the current challenge
        (in induction mode only the shown pairs, never the program)."""
        seen = {
            "role": player,
            "mode": self.mode,
            "round": self.round + 1,
            "rounds": self.rounds,
            "inputs": self.n_inputs,
            "phase": self.phase,
            "history": [dict(entry) for entry in self.history]
            if player == "proposer" or self.mode == "output"
            else [{k: v for k, v in entry.items() if k != "program"} for entry in self.history],
        }
        if player == "solver" and self.current is not None:
            if self.mode == "output":
                seen["program"], seen["input"] = self.current["program"], self.current["inputs"][0]
            else:
                seen["pairs"] = [
                    {"input": i, "output": o} for i, o in zip(self.current["inputs"][: self.shown], self.current["outputs"][: self.shown])
                ]
        return seen

    def render(self) -> str:
        """Rounds played and solved."""
        solved = sum(bool(entry["solved"]) for entry in self.history)
        return f"round {min(self.round + 1, self.rounds)} of {self.rounds} ({self.mode}), {self.phase}; solved {solved} of {len(self.history)}"
