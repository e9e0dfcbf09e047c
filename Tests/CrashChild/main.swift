print("crash child: not built yet")
