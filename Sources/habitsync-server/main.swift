import HabitSyncCLI

await HabitSyncEntryPoint.main()
