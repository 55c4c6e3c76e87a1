"""Board, card, dice and matrix games, one file each."""
