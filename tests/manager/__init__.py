"""The game manager's tests (``game.manager``, ``game.running``); ``harness`` holds
what they share."""
