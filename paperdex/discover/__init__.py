"""The discovery stage, over a store and the search engine: the user's library of tags and
saved searches (`library`), recommendations learned from it (`recommend`), the daily feed
(`feed`), the digest (`digest`) and machine summaries (`summaries`)."""
