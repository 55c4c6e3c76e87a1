// The play page: start a live match as a submitter and play its turns, moves as buttons where the game lists them.
(function () {
  var form = document.getElementById("play-form");
  if (!form) { return; }
  var playable = JSON.parse(form.dataset.playable);
  var envSelect = document.getElementById("env"), opponentSelect = document.getElementById("opponent");
  var status = document.getElementById("play-status"), area = document.getElementById("play-area");
  var observation = document.getElementById("observation"), moves = document.getElementById("moves");
  var textMove = document.getElementById("text-move"), actionBox = document.getElementById("action");
  var turnHead = document.getElementById("turn-head");
  var match = null, token = null, awaited = null;

  function option(select, value) {
    var node = document.createElement("option");
    node.value = value;
    node.textContent = value;
    select.appendChild(node);
  }
  Object.keys(playable).sort().forEach(function (envId) { option(envSelect, envId); });
  function fillOpponents() {
    opponentSelect.textContent = "";
    var opponents = playable[envSelect.value] || [];
    opponents.forEach(function (name) { option(opponentSelect, name); });
    opponentSelect.disabled = opponents.length === 0;
    if (opponents.indexOf("random") >= 0) { opponentSelect.value = "random"; }
  }
  envSelect.addEventListener("change", fillOpponents);
  var wanted = new URLSearchParams(window.location.search).get("env");
  if (wanted && playable[wanted]) { envSelect.value = wanted; }
  fillOpponents();

  function api(method, path, body) {
    var options = { method: method, headers: { "Authorization": "Bearer " + token } };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    return fetch(path, options).then(function (response) {
      return response.json().then(function (answer) {
        if (!response.ok) { throw new Error(answer.detail || answer.reason || ("the server answered " + response.status)); }
        return answer;
      });
    });
  }

  function failed(error) { status.textContent = "Refused: " + error.message; }

  function next() {
    api("GET", "api/live/" + match + "/turn?wait=20").then(function (turn) {
      if (turn.status === "wait") { next(); return; }
      if (turn.status === "act") { show(turn); return; }
      moves.textContent = "";
      textMove.hidden = true;
      if (turn.status === "done") {
        turnHead.textContent = "The match is over";
        status.textContent = "";
        status.appendChild(document.createTextNode("Stored as "));
        var link = document.createElement("a");
        link.id = "submission-link";
        link.href = "submission/" + turn.submission + ".html";
        link.textContent = "submission #" + turn.submission;
        status.appendChild(link);
        status.appendChild(document.createTextNode(" (" + turn.episodes + " episode(s))."));
      } else {
        status.textContent = "The match ended in an error: " + turn.detail;
      }
    }).catch(failed);
  }

  function send(action) {
    var turn = awaited;
    awaited = null;
    moves.textContent = "";
    textMove.hidden = true;
    api("POST", "api/live/" + match + "/act", { turn: turn, action: action }).then(function (answer) {
      status.textContent = answer.status === "failed" ? "That episode failed on the server: " + answer.detail : "";
      next();
    }).catch(failed);
  }

  function show(turn) {
    awaited = turn.turn;
    turnHead.textContent = "Episode " + (turn.episode + 1) + ", turn " + turn.turn + ": you are " + turn.player;
    observation.textContent = turn.observation.text;
    moves.textContent = "";
    var legal = turn.observation.legal_moves;
    textMove.hidden = Array.isArray(legal);
    if (Array.isArray(legal)) {
      legal.forEach(function (move) {
        var button = document.createElement("button");
        button.type = "button";
        button.className = "move";
        button.textContent = move;
        button.addEventListener("click", function () { send(move); });
        moves.appendChild(button);
      });
    } else {
      actionBox.value = "";
      actionBox.focus();
    }
  }

  textMove.addEventListener("submit", function (event) {
    event.preventDefault();
    if (awaited !== null) { send(actionBox.value); }
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    token = document.getElementById("token").value.trim();
    var body = { env_id: envSelect.value, agent: document.getElementById("name").value.trim() };
    body.opponent = opponentSelect.disabled ? null : opponentSelect.value;
    api("POST", "api/live", body).then(function (created) {
      match = created.match;
      form.hidden = true;
      area.hidden = false;
      document.getElementById("watch-link").href = "live/" + match + ".html";
      status.textContent = "Match started: " + created.agents.join(" vs ") + ", " + created.episodes + " episode(s).";
      next();
    }).catch(failed);
  });
})();
